// The checks ctl and the admin API make on serve and scale (gateway/admin-api/models.ts's serveBody
// and scaleBody), made before sending, so a mistake is named beside its field.

export const VERSION = /^[A-Za-z0-9._-]{1,64}$/;

/** The replica count, or null when it is not a whole number from 0 to 1000. */
export function replicasOf(text: string): number | null {
  if (!/^\d+$/.test(text.trim())) return null;
  const n = Number(text);
  return n >= 0 && n <= 1000 ? n : null;
}

/** Undefined for an empty field (the catalog's default), null when invalid. */
export function versionOf(text: string): string | undefined | null {
  const v = text.trim();
  if (!v) return undefined;
  return VERSION.test(v) ? v : null;
}

/** A canary's share of traffic in percent: more than 0, less than 100; null otherwise. */
export function weightOf(text: string): number | null {
  const n = Number(text.trim());
  return text.trim() !== "" && Number.isFinite(n) && n > 0 && n < 100 ? n : null;
}

/** A duration as the admin API takes it (`90s`, `5m`, `1h`, `500ms`); null otherwise. */
export function durationOf(text: string): string | null {
  const v = text.trim();
  return /^\d+(ms|s|m|h)$/.test(v) && !/^0+(ms|s|m|h)$/.test(v) ? v : null;
}

/** A wave size (replicas replaced at once): a whole number from 1 to 1000; null otherwise. */
export function waveOf(text: string): number | null {
  if (!/^\d+$/.test(text.trim())) return null;
  const n = Number(text);
  return n >= 1 && n <= 1000 ? n : null;
}
