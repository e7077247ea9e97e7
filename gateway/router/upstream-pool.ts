// The connections to one replica or outside provider. An idle one is dropped after 4 s: vLLM's server
// (uvicorn) closes a connection idle for 5 s and sends no Keep-Alive header saying so (measured: 5.00 s,
// no header), and a request written to a connection the server is closing fails before its first
// byte. Under load connections never sit that long; when a server does send its timeout, undici
// keeps to that instead.
import { Pool } from "undici";

export const UPSTREAM_IDLE_MS = 4_000;

export function upstreamPool(origin: string, connections: number): Pool {
  return new Pool(origin, { connections, pipelining: 1, keepAliveTimeout: UPSTREAM_IDLE_MS });
}
