// One loader for every page: what an API call gave, its error, and a way to load it again.
import { useCallback, useEffect, useState } from "react";

export interface Loaded<T> {
  data: T | undefined;
  error: unknown;
  reload: () => void;
}

export function useLoad<T>(load: () => Promise<T>, deps: unknown[] = [], everyMs?: number): Loaded<T> {
  const [data, setData] = useState<T>();
  const [error, setError] = useState<unknown>();
  const [tick, setTick] = useState(0);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  useEffect(() => {
    let live = true;
    load().then(
      (d) => {
        if (!live) return;
        setData(d);
        setError(undefined);
      },
      (e: unknown) => live && setError(e),
    );
    return () => void (live = false);
  }, [tick, ...deps]);
  useEffect(() => {
    if (!everyMs) return;
    const t = setInterval(reload, everyMs);
    return () => clearInterval(t);
  }, [everyMs, reload]);
  return { data, error, reload };
}
