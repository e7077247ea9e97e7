// One uPlot chart: a line per group over the days of the range. uPlot draws on a canvas, so the
// figure also has a text label, and the page shows the same numbers in a table.
import { useEffect, useRef } from "react";
import uPlot from "uplot";

const COLOURS = ["#1f5fbf", "#b3401a", "#1b7a3a", "#7a3ab3", "#8a6a00", "#00707a", "#a3165a", "#4a4a4a"];

export interface Series {
  label: string;
  values: (number | null)[];
}

export function UsageChart({ title, days, series }: { title: string; days: number[]; series: Series[] }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el || days.length === 0) return;
    const plot = new uPlot(
      {
        title,
        width: Math.max(320, el.clientWidth || 900),
        height: 260,
        scales: { x: { time: true } },
        series: [{}, ...series.map((s, i) => ({ label: s.label, stroke: COLOURS[i % COLOURS.length], width: 2, points: { show: true } }))],
        axes: [{}, { size: 70 }],
      },
      [days, ...series.map((s) => s.values)] as uPlot.AlignedData,
      el,
    );
    return () => plot.destroy();
  }, [title, days, series]);
  return <div ref={box} className="chart" role="img" aria-label={title} data-series={series.length} />;
}
