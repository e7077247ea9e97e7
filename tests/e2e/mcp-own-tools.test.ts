// llmgw's own tools on /mcp, with the SDK's own client against a real platform (gateway, worker,
// agent, the ComfyUI stand-in engine): llmgw-admin's read-only tools answer for staff (a key granted
// llmgw-admin by name) from the platform as the admin API sees it, and nobody else sees them (not
// even a key granted `*`); llmgw.images.generate makes a picture, reporting progress, under the
// key's model grants; llmgw.jobs.status and llmgw.files.get read the job and the picture back, and
// llmgw.3d.generate makes a mesh of it.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema, McpError, type CallToolResult, type Progress } from "@modelcontextprotocol/sdk/types.js";
import { prisma, type PrismaClient } from "../../common/db.ts";
import { pngSize } from "../../common/png.ts";
import { startPlatform, uniqueModel, type Platform } from "../helpers/platform.ts";
import { keyMaker, type NewKey } from "../helpers/platform-setup.ts";

const text = (r: unknown) => ((r as CallToolResult).content[0] as { text: string }).text;
const json = <T,>(r: unknown) => JSON.parse(text(r)) as T;

describe("llmgw's own tools on /mcp", () => {
  let p: Platform;
  let db: PrismaClient;
  let staff: NewKey, everything: NewKey, otherModels: NewKey, none: NewKey;
  let operationId: string;
  const model = uniqueModel("mcp-pix");
  const clients: Client[] = [];

  const ctl = async (args: string[]) => {
    const r = await p.ctl(args);
    assert.equal(r.code, 0, `ctl ${args.join(" ")}: ${r.stderr}${r.stdout}`);
    return r.stdout;
  };
  const connect = async (key: string) => {
    const c = new Client({ name: "mcp-own-test", version: "1" });
    await c.connect(new StreamableHTTPClientTransport(new URL(`${p.clientUrl}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
    clients.push(c);
    return c;
  };
  const names = async (c: Client) => (await c.listTools()).tools.map((t) => t.name).sort();

  before(async () => {
    p = await startPlatform();
    db = prisma(p.env.DATABASE_URL);
    const op = JSON.parse(await ctl(["model", "serve", model, "--engine", "comfyui", "--replicas", "1", "--arg=--llmgw-standin", "--arg=--step-ms=20", "--wait", "--json"])) as { id: string; status: string };
    assert.equal(op.status, "COMPLETED");
    operationId = op.id;
    const newKey = keyMaker((a) => p.ctl(a));
    [staff, everything, otherModels, none] = [await newKey({ project: "agents" }), await newKey({ project: "agents" }), await newKey({ project: "agents", args: ["--model", "other-*"] }), await newKey({ project: "agents" })];
    await ctl(["keys", "limits", staff.id, "--tools", "llmgw-admin.*"]);
    await ctl(["keys", "limits", everything.id, "--tools", "*"]);
    await ctl(["keys", "limits", otherModels.id, "--tools", "llmgw.*"]);
  });

  after(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await db?.$disconnect();
    await p?.stop();
  });

  it("shows llmgw-admin to staff only, llmgw.* to keys granted it, nothing to a key granted nothing", async () => {
    const admin = await names(await connect(staff.key));
    assert.deepEqual(admin, ["cluster_status", "explain_placement", "list_models", "list_nodes", "list_replicas", "node_logs", "operation_status"].map((t) => `llmgw-admin.${t}`));
    const all = await names(await connect(everything.key));
    assert.ok(all.includes("llmgw.images.generate") && all.includes("llmgw.files.get"), all.join(", "));
    assert.ok(!all.some((n) => n.startsWith("llmgw-admin.")), "a grant of * does not reach llmgw-admin");
    assert.deepEqual(await names(await connect(none.key)), []);
    await assert.rejects((await connect(everything.key)).callTool({ name: "llmgw-admin.list_nodes", arguments: {} }), (e: unknown) => e instanceof McpError && /unknown tool/.test(e.message));
  });

  it("answers llmgw-admin's tools from the platform, changing nothing", async () => {
    const c = await connect(staff.key);
    const replica = await db.replica.findFirstOrThrow({ where: { modelName: model } });
    const status = json<{ nodes: { total: number; heard: number }; models: { serving: number }; replicas: Record<string, number> }>(await c.callTool({ name: "llmgw-admin.cluster_status", arguments: {} }));
    assert.ok(status.nodes.total >= 1 && status.nodes.heard >= 1 && status.models.serving >= 1 && (status.replicas.ready ?? 0) >= 1, JSON.stringify(status));
    const nodes = json<{ nodes: { id: string }[] }>(await c.callTool({ name: "llmgw-admin.list_nodes", arguments: {} }));
    assert.ok(nodes.nodes.some((n) => n.id === replica.nodeId));
    const models = json<{ models: { name: string; ready: number }[] }>(await c.callTool({ name: "llmgw-admin.list_models", arguments: {} }));
    assert.equal(models.models.find((m) => m.name === model)?.ready, 1);
    const replicas = json<{ replicas: { id: string; engine: string; state: string }[] }>(await c.callTool({ name: "llmgw-admin.list_replicas", arguments: { model } }));
    assert.deepEqual(replicas.replicas.map((r) => [r.id, r.engine, r.state]), [[replica.id, "comfyui", "ready"]]);
    const placement = await c.callTool({ name: "llmgw-admin.explain_placement", arguments: { model, replicas: 1 } });
    assert.ok(!placement.isError && /need/.test(text(placement)), text(placement));
    const opStatus = json<{ id: string; status: string }>(await c.callTool({ name: "llmgw-admin.operation_status", arguments: { id: operationId } }));
    assert.deepEqual([opStatus.id, opStatus.status], [operationId, "COMPLETED"]);
    const logs = json<{ logs: { replica: string; log: string }[] }>(await c.callTool({ name: "llmgw-admin.node_logs", arguments: { node: replica.nodeId, tail_bytes: 4096 } }));
    assert.equal(logs.logs[0]?.replica, replica.id);
    assert.ok(logs.logs[0]!.log.length > 0 && !logs.logs[0]!.log.startsWith("(the log could not be read"), logs.logs[0]!.log);
    const unknown = await c.callTool({ name: "llmgw-admin.node_logs", arguments: { node: "no-such-node" } });
    assert.ok(unknown.isError && /no node 'no-such-node'/.test(text(unknown)), text(unknown));
    await assert.rejects(c.callTool({ name: "llmgw-admin.list_replicas", arguments: { model: 7 } }), (e: unknown) => e instanceof McpError && e.code === -32602);
    assert.equal(await db.replica.count({ where: { modelName: model } }), 1, "nothing was changed");
  });

  it("makes a picture through llmgw.images.generate, reporting progress, and reads it back", async () => {
    const c = await connect(everything.key);
    const progress: Progress[] = [];
    const r = (await c.callTool({ name: "llmgw.images.generate", arguments: { model, prompt: "a lighthouse at dusk", size: "64x64", steps: 4 } }, CallToolResultSchema, { onprogress: (p) => void progress.push(p), timeout: 120_000 })) as CallToolResult;
    assert.ok(!r.isError, text(r));
    const image = r.content.find((x) => x.type === "image") as { data: string; mimeType: string } | undefined;
    assert.equal(image?.mimeType, "image/png");
    assert.deepEqual(pngSize(Buffer.from(image!.data, "base64")), { width: 64, height: 64 });
    assert.ok(progress.length >= 1, "progress was reported");
    const made = json<{ job: string; files: { id: string }[] }>(r);
    const job = json<{ status: string; model: string }>(await c.callTool({ name: "llmgw.jobs.status", arguments: { id: made.job } }));
    assert.deepEqual([job.status, job.model], ["completed", model]);
    const file = (await c.callTool({ name: "llmgw.files.get", arguments: { id: made.files[0]!.id } })) as CallToolResult;
    assert.equal((file.content[0] as { data: string }).data, image!.data);
    const mesh = (await c.callTool({ name: "llmgw.3d.generate", arguments: { model, file_id: made.files[0]!.id, resolution: 64, steps: 2 } }, CallToolResultSchema, { timeout: 120_000 })) as CallToolResult;
    assert.ok(!mesh.isError, text(mesh));
    assert.equal(json<{ files: { content_type: string }[] }>(mesh).files[0]?.content_type, "model/gltf-binary");
    const audited = await db.auditEvent.findFirst({ where: { action: "mcp.call", target: "llmgw.images.generate", actor: `key:${everything.id}` } });
    assert.equal((audited?.after as { outcome?: string } | null)?.outcome, "ok");
  });

  it("holds llmgw's media tools to the key's model grants", async () => {
    const r = await (await connect(otherModels.key)).callTool({ name: "llmgw.images.generate", arguments: { model, prompt: "x", size: "64x64" } });
    assert.ok(r.isError && /may not use model/.test(text(r)), text(r));
    assert.equal(await db.job.count({ where: { model, projectId: (await db.project.findUniqueOrThrow({ where: { name: "agents" } })).id } }), 2, "no job was made (the picture and the mesh were)");
  });
});
