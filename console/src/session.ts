// Who is signed in: GET /api/v1/me, once at start. A 401 means no session: the sign-in page.
import { createContext, useContext } from "react";
import { api, ApiError, setCsrf } from "./api.ts";
import type { Me } from "./roles.ts";

export type SessionState = { kind: "loading" } | { kind: "signed-out" } | { kind: "error"; error: unknown } | { kind: "signed-in"; me: Me };

export async function loadSession(): Promise<SessionState> {
  try {
    const me = await api.get<Me>("/me");
    setCsrf(me.csrf);
    return { kind: "signed-in", me };
  } catch (e) {
    if (e instanceof ApiError && e.status === 401) return { kind: "signed-out" };
    return { kind: "error", error: e };
  }
}

export const MeContext = createContext<Me | null>(null);
export const useMe = () => useContext(MeContext);
