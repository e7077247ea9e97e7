// An engine's log, read from its node's agent (the Logs stream of agent.proto): the last bytes,
// and with follow=true what it writes next, for as long as the caller stays. Streamed as plain
// text; a replica the store does not know, or whose node has no log of it, is a JSON 404.
import * as grpc from "@grpc/grpc-js";
import { Router } from "express";
import { z } from "zod";
import type { AgentApi } from "../../agent/client.ts";
import type { PrismaClient } from "../../common/db.ts";
import { AdminError, check } from "./errors.ts";

/** The agent of a node, by its id and address (one client per node, kept by the caller). */
export type AgentFor = (node: { id: string; address: string }) => AgentApi;

export const replicaIdPath = z.object({ id: z.string().min(1).max(200) });
export const engineLogsQuery = z.object({
  tail: z.coerce.number().int().min(1).max(4 << 20).default(64 << 10).describe("bytes from the end"),
  follow: z.enum(["true", "false"]).default("false").describe("keep the answer open and send what the engine writes next"),
});

export function engineLogRoutes(db: PrismaClient, agentFor: AgentFor | undefined): Router {
  const r = Router();
  r.get("/replicas/:id/logs", async (req, res) => {
    const { id } = check(replicaIdPath, req.params);
    const q = check(engineLogsQuery, req.query);
    if (!agentFor) throw new AdminError(503, "this API cannot reach agents here; use the admin port");
    const replica = await db.replica.findUnique({ where: { id }, include: { node: true } });
    if (!replica) throw new AdminError(404, `no replica '${id}'; \`ctl model show NAME\` lists them`, "id");
    const stream = agentFor({ id: replica.node.id, address: replica.node.address }).logs({ replicaId: id, tailBytes: q.tail, follow: q.follow === "true" });
    // The caller leaving ends the stream at the agent too.
    res.on("close", () => stream.cancel());
    await new Promise<void>((resolve, reject) => {
      stream.on("data", (chunk: { data: Buffer }) => {
        if (!res.headersSent) res.status(200).type("text/plain; charset=utf-8").setHeader("cache-control", "no-store");
        res.write(chunk.data);
      });
      stream.on("end", () => resolve());
      stream.on("error", (err: grpc.ServiceError) => {
        if (err.code === grpc.status.CANCELLED) return resolve();
        if (res.headersSent) return resolve();
        if (err.code === grpc.status.NOT_FOUND) return reject(new AdminError(404, err.details || `no log of replica '${id}'`, "id"));
        reject(new AdminError(502, `the agent of node '${replica.node.id}' did not answer: ${err.details || err.message}`));
      });
    });
    if (!res.headersSent) res.status(200).type("text/plain; charset=utf-8");
    res.end();
  });
  return r;
}
