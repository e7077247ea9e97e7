// Every call the console makes: the admin API (/api/v1) and the client API (/v1) on this origin.
// The session cookie travels by itself; a state-changing call echoes the CSRF cookie in
// x-csrf-token (the double-submit check the admin API makes for cookie sessions).

/** An answer that was not 2xx, with the API's own message (and the field at fault when it names one). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly field?: string,
  ) {
    super(message);
  }
}

export function cookie(name: string): string | undefined {
  for (const part of document.cookie.split(";")) {
    const [k, ...v] = part.trim().split("=");
    if (k === name) return decodeURIComponent(v.join("="));
  }
  return undefined;
}

/** The CSRF token: the cookie, else the one /api/v1/me gave (kept by setCsrf). */
let csrfFromMe: string | undefined;
export const setCsrf = (token: string | undefined) => void (csrfFromMe = token);

async function errorOf(res: Response): Promise<ApiError> {
  const text = await res.text();
  try {
    const body = JSON.parse(text) as { error?: { message?: string; field?: string } | string; message?: string };
    const e = body.error;
    if (typeof e === "string") return new ApiError(res.status, e);
    if (e?.message) return new ApiError(res.status, e.message, e.field);
    if (body.message) return new ApiError(res.status, body.message);
  } catch {
    // not JSON: the status says it
  }
  return new ApiError(res.status, text.slice(0, 300) || res.statusText || `HTTP ${res.status}`);
}

export async function request(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Response> {
  const h: Record<string, string> = { accept: "application/json", ...headers };
  if (body !== undefined) h["content-type"] = "application/json";
  if (method !== "GET" && method !== "HEAD") {
    const csrf = cookie("llmgw_csrf") ?? csrfFromMe;
    if (csrf) h["x-csrf-token"] = csrf;
  }
  const res = await fetch(path, { method, headers: h, credentials: "same-origin", body: body === undefined ? undefined : JSON.stringify(body) });
  if (!res.ok) throw await errorOf(res);
  return res;
}

export const api = {
  get: async <T>(path: string): Promise<T> => (await (await request("GET", `/api/v1${path}`)).json()) as T,
  post: async <T>(path: string, body: unknown = {}): Promise<T> => (await (await request("POST", `/api/v1${path}`, body)).json()) as T,
  put: async <T>(path: string, body: unknown): Promise<T> => (await (await request("PUT", `/api/v1${path}`, body)).json()) as T,
  del: async <T>(path: string): Promise<T> => (await (await request("DELETE", `/api/v1${path}`)).json()) as T,
  text: async (path: string): Promise<string> => (await request("GET", `/api/v1${path}`, undefined, { accept: "text/csv" })).text(),
};

/** A message for a failed call: a 403 says plainly that the role does not allow it. */
export function describeError(err: unknown, forbidden: string, signedOut: string): string {
  if (err instanceof ApiError) {
    if (err.status === 403) return `${forbidden} (${err.message})`;
    if (err.status === 401) return signedOut;
    return err.field ? `${err.message} (field: ${err.field})` : err.message;
  }
  return err instanceof Error ? err.message : String(err);
}
