// Client-side routes under /console: the gateway answers index.html for each (console-static.ts),
// and history.pushState moves between them without a reload.
import { useEffect, useState } from "react";

export const BASE = "/console";

export function navigate(to: string): void {
  history.pushState(null, "", `${BASE}${to}`);
  dispatchEvent(new PopStateEvent("popstate"));
}

/** The path after /console ("/" for the overview). */
export function usePath(): string {
  const read = () => location.pathname.slice(BASE.length).replace(/\/+$/, "") || "/";
  const [path, setPath] = useState(read);
  useEffect(() => {
    const on = () => setPath(read());
    addEventListener("popstate", on);
    return () => removeEventListener("popstate", on);
  }, []);
  return path;
}
