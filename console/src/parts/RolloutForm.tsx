// Upgrade and canary of one model, checked as the admin API checks them (upgradeBody, canaryBody in
// gateway/admin-api/models.ts) before sending; the operation they start shows live like the others.
import { useState, type FormEvent } from "react";
import { api } from "../api.ts";
import { useT } from "../messages/index.ts";
import { ErrorBox } from "./common.tsx";
import { remember } from "./operations.ts";
import { durationOf, versionOf, waveOf, weightOf } from "../validate.ts";

export function RolloutForm({ name, versions, onChange }: { name: string; versions: string[]; onChange: () => void }) {
  const t = useT();
  const [error, setError] = useState<unknown>();
  const [fieldError, setFieldError] = useState<string>();
  const id = (f: string) => `${name}-rollout-${f}`;
  const submit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const f = new FormData(e.currentTarget);
    const action = (e.nativeEvent as SubmitEvent).submitter?.getAttribute("value") === "canary" ? "canary" : "upgrade";
    const version = versionOf(String(f.get("version") ?? ""));
    const wave = waveOf(String(f.get("wave") ?? ""));
    if (!version) return setFieldError(version === null ? t.models.versionInvalid : t.models.versionRequired);
    if (wave === null) return setFieldError(t.models.waveInvalid);
    let body: Record<string, unknown> = { version, wave };
    if (action === "canary") {
      const weight = weightOf(String(f.get("weight") ?? ""));
      const judgeFor = durationOf(String(f.get("for") ?? ""));
      if (weight === null) return setFieldError(t.models.weightInvalid);
      if (judgeFor === null) return setFieldError(t.models.durationInvalid);
      body = { ...body, weight, for: judgeFor };
    }
    setFieldError(undefined);
    api.post<{ operationId: string; uiUrl?: string }>(`/models/${encodeURIComponent(name)}/${action}`, body).then(
      (a) => {
        setError(undefined);
        remember({ operationId: a.operationId, uiUrl: a.uiUrl, what: `${action === "canary" ? t.models.canary : t.models.upgrade} ${name} → ${version}` });
        onChange();
      },
      (err: unknown) => setError(err),
    );
  };
  return (
    <form className="inline" onSubmit={submit} aria-label={`${t.models.rollout} ${name}`} noValidate>
      <label htmlFor={id("version")}>{t.models.toVersion}</label>
      <input id={id("version")} name="version" list={id("versions")} aria-describedby={id("err")} />
      <datalist id={id("versions")}>
        {versions.map((v) => (
          <option key={v} value={v} />
        ))}
      </datalist>
      <label htmlFor={id("wave")}>{t.models.wave}</label>
      <input id={id("wave")} name="wave" inputMode="numeric" defaultValue="1" />
      <label htmlFor={id("weight")}>{t.models.weight}</label>
      <input id={id("weight")} name="weight" inputMode="decimal" defaultValue="10" />
      <label htmlFor={id("for")}>{t.models.for}</label>
      <input id={id("for")} name="for" defaultValue="5m" />
      <button type="submit" value="upgrade">
        {t.models.upgrade}
      </button>
      <button type="submit" value="canary">
        {t.models.canary}
      </button>
      <span id={id("err")} role={fieldError ? "alert" : undefined} className="error">
        {fieldError}
      </span>
      <ErrorBox error={error} />
    </form>
  );
}
