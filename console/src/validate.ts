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
