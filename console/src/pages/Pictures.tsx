// Pictures: a prompt sent to /v1/images/generations (OpenAI's shape) with one of the person's keys,
// the pictures shown inline (b64_json). The picker holds the key's models that make pictures.
import { useState, type FormEvent } from "react";
import { useT } from "../messages/index.ts";
import { clientCall, useClientKey } from "../parts/ClientKey.tsx";
import { ErrorBox } from "../parts/common.tsx";
import { useLoad } from "../parts/load.ts";
import { comfyModels } from "../parts/pictureModels.ts";
import { ModelSelect } from "../parts/ModelSelect.tsx";

const SIZES = ["512x512", "768x768", "1024x1024"];

export function Pictures() {
  const t = useT();
  const [error, setError] = useState<unknown>();
  const { key, models, form } = useClientKey(setError);
  const comfy = useLoad(comfyModels);
  const usable = (models ?? []).filter((m) => comfy.data?.has(m));
  const [busy, setBusy] = useState(false);
  const [pictures, setPictures] = useState<string[]>([]);
  const make = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const f = new FormData(e.currentTarget);
    setBusy(true);
    setError(undefined);
    try {
      const res = await clientCall(key, "/v1/images/generations", {
        method: "POST",
        body: JSON.stringify({ model: String(f.get("model")), prompt: String(f.get("prompt")), size: String(f.get("size")), n: 1, response_format: "b64_json" }),
      });
      const body = (await res.json()) as { data: { b64_json?: string }[] };
      setPictures(body.data.flatMap((d) => (d.b64_json ? [`data:image/png;base64,${d.b64_json}`] : [])));
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <h1>{t.pictures.title}</h1>
      {form}
      {models && usable.length === 0 ? <p>{t.pictures.noModels}</p> : null}
      <form className="chat" onSubmit={(e) => void make(e)} aria-label={t.pictures.title}>
        <ModelSelect label={t.playground.model} models={usable} />
        <label>
          {t.pictures.size}{" "}
          <select name="size" defaultValue="512x512">
            {SIZES.map((s) => (
              <option key={s}>{s}</option>
            ))}
          </select>
        </label>
        <label htmlFor="pic-prompt">{t.pictures.prompt}</label>
        <textarea id="pic-prompt" name="prompt" rows={3} required maxLength={4000} />
        <button type="submit" disabled={busy || !usable.length}>
          {busy ? t.pictures.making : t.pictures.make}
        </button>
      </form>
      <ErrorBox error={error} />
      <div className="pictures" aria-live="polite">
        {pictures.map((src, i) => (
          <img key={i} src={src} alt={`${t.pictures.result} ${i + 1}`} width={256} />
        ))}
      </div>
    </>
  );
}
