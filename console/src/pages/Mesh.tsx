// 3D: a picture sent to /v1/3d/generations with one of the person's keys; the job is polled until
// it ends, and the finished mesh (a GLB from /v1/files/{id}/content) is shown in <model-viewer>,
// which loads only on this page (it is most of the console's weight).
import { createElement, useEffect, useState, type FormEvent } from "react";
import { useT } from "../messages/index.ts";
import { clientCall, useClientKey } from "../parts/ClientKey.tsx";
import { ErrorBox } from "../parts/common.tsx";
import { useLoad } from "../parts/load.ts";
import { comfyModels } from "../parts/pictureModels.ts";
import { ModelSelect } from "../parts/ModelSelect.tsx";

interface Job {
  id: string;
  status: string;
  progress: { value?: number; max?: number };
  result: { file_id: string } | null;
  error: { message: string } | null;
}
const ENDED = ["completed", "failed", "cancelled"];

const dataUrl = (file: File) =>
  new Promise<string>((resolve, reject) => {
    const r = new FileReader();
    r.onload = () => resolve(String(r.result));
    r.onerror = () => reject(r.error ?? new Error("could not read the file"));
    r.readAsDataURL(file);
  });

export function Mesh() {
  const t = useT();
  const [error, setError] = useState<unknown>();
  const { key, models, form } = useClientKey(setError);
  const comfy = useLoad(comfyModels);
  const usable = (models ?? []).filter((m) => comfy.data?.has(m));
  const [job, setJob] = useState<Job>();
  const [glb, setGlb] = useState<string>();
  const [viewer, setViewer] = useState(false);
  useEffect(() => void import("@google/model-viewer").then(() => setViewer(true), setError), []);
  useEffect(() => () => void (glb && URL.revokeObjectURL(glb)), [glb]);

  // Poll the job each second until it ends; then fetch its GLB with the key (a blob the viewer reads).
  useEffect(() => {
    if (!job || ENDED.includes(job.status)) {
      if (job?.status === "completed" && job.result && !glb)
        void clientCall(key, `/v1/files/${encodeURIComponent(job.result.file_id)}/content`)
          .then((r) => r.blob())
          .then((b) => setGlb(URL.createObjectURL(new Blob([b], { type: "model/gltf-binary" }))), setError);
      return;
    }
    const timer = setTimeout(
      () =>
        void clientCall(key, `/v1/3d/generations/${encodeURIComponent(job.id)}`)
          .then((r) => r.json() as Promise<Job>)
          .then(setJob, setError),
      1000,
    );
    return () => clearTimeout(timer);
  }, [job, key, glb]);

  const make = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const f = new FormData(e.currentTarget);
    const picture = f.get("picture");
    setError(undefined);
    setGlb(undefined);
    try {
      if (!(picture instanceof File) || picture.size === 0) throw new Error(t.mesh.pictureNeeded);
      const res = await clientCall(key, "/v1/3d/generations", { method: "POST", body: JSON.stringify({ model: String(f.get("model")), image: await dataUrl(picture) }) });
      setJob((await res.json()) as Job);
    } catch (err) {
      setError(err);
    }
  };
  const running = job && !ENDED.includes(job.status);
  return (
    <>
      <h1>{t.mesh.title}</h1>
      {form}
      {models && usable.length === 0 ? <p>{t.pictures.noModels}</p> : null}
      <form className="chat" onSubmit={(e) => void make(e)} aria-label={t.mesh.title}>
        <ModelSelect label={t.playground.model} models={usable} />
        <label>
          {t.mesh.picture} <input type="file" name="picture" accept="image/png,image/jpeg,image/gif,image/webp" required />
        </label>
        <button type="submit" disabled={!!running || !usable.length}>
          {t.mesh.make}
        </button>
      </form>
      <ErrorBox error={error ?? (job?.error ? new Error(job.error.message) : undefined)} />
      {job ? (
        <p role="status" data-job-status={job.status}>
          {t.mesh.job} {job.id}: {job.status}
          {job.progress?.max ? ` (${job.progress.value ?? 0}/${job.progress.max})` : ""}
        </p>
      ) : null}
      {glb && viewer
        ? createElement(
            "model-viewer",
            { src: glb, alt: t.mesh.viewerAlt, "camera-controls": "", "auto-rotate": "", class: "mesh-viewer", "data-testid": "mesh" },
            // Its default AR links have tabindex above 0, one focusable yet aria-hidden (axe: serious);
            // there is no AR here, so empty slots replace them.
            createElement("span", { key: "ar", slot: "ar-button", hidden: true }),
            createElement("span", { key: "exit", slot: "exit-webxr-ar-button", hidden: true }),
          )
        : null}
    </>
  );
}
