// The MCP gateway's pure parts: registrations refused with the reason, grant patterns, an OpenAPI
// document's operations as tools, and the single tools/call check (the breaker: tests/integration/mcp-breaker.test.ts).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { toolGranted, TOOL_PATTERN } from "../../gateway/mcp/grants.ts";
import { badToolCall } from "../../gateway/mcp/http.ts";
import { operationsOf } from "../../gateway/mcp/openapi-upstream.ts";
import { mcpServerBody } from "../../gateway/mcp/spec.ts";
import { EMPLOYEES_OPENAPI } from "../helpers/mcp-upstreams.ts";

const message = (v: unknown) => {
  const r = mcpServerBody.safeParse(v);
  return r.success ? null : r.error.issues.map((i) => i.message).join("; ");
};

describe("MCP registrations", () => {
  it("takes one of url, command or openapi", () => {
    assert.equal(message({ name: "jira", url: "https://jira.example.com/mcp" }), null);
    assert.equal(message({ name: "files", command: ["/usr/bin/node", "s.js"], env: { ROOT: "/srv" } }), null);
    assert.equal(message({ name: "hr", openapi: EMPLOYEES_OPENAPI, url: "http://hr" }), null);
    assert.match(message({ name: "x" })!, /exactly one of url/);
    assert.match(message({ name: "x", url: "https://a", command: ["b"] })!, /exactly one of url/);
  });

  it("refuses a URL with a user or password, saying where credentials go, never echoing them", () => {
    const m = message({ name: "jira", url: "https://ann:hunter2@jira.example.com/mcp" })!;
    assert.match(m, /user name or password.*--header-file/);
    assert.ok(!m.includes("hunter2"));
  });

  it("refuses names with dots, relative header files, env on HTTP servers, other schemes", () => {
    assert.match(message({ name: "a.b", url: "https://a" })!, /lower-case/);
    assert.match(message({ name: "a", url: "https://a", headerFiles: { authorization: "token.txt" } })!, /absolute path/);
    assert.match(message({ name: "a", url: "https://a", env: { A: "1" } })!, /Unrecognized key: "env"/);
    assert.match(message({ name: "a", url: "file:///etc/passwd" })!, /http/);
    assert.ok(message({ name: "a", url: "https://a", timeout: "0s" }), "a zero timeout");
  });
});

describe("MCP grants", () => {
  it("server.* grants that server's tools only; an exact name that tool; * every tool; nothing nothing", () => {
    assert.ok(toolGranted(["jira.*"], "jira.search"));
    assert.ok(!toolGranted(["jira.*"], "jirax.search"));
    assert.ok(toolGranted(["files.read"], "files.read") && !toolGranted(["files.read"], "files.write"));
    assert.ok(toolGranted(["*"], "hr.getEmployee"));
    assert.ok(!toolGranted([], "jira.search"));
    for (const ok of ["jira.*", "files.read", "*", "hr.get_employee"]) assert.match(ok, TOOL_PATTERN);
    for (const bad of ["jira", "jira.", "*.read", "Jira.*", "j ira.x"]) assert.doesNotMatch(bad, TOOL_PATTERN);
  });
});

describe("OpenAPI operations as tools", () => {
  it("names them by operationId and builds their input schema, $refs inlined", () => {
    const ops = operationsOf(EMPLOYEES_OPENAPI);
    assert.deepEqual(ops.map((o) => `${o.method} ${o.path} ${o.tool.name}`), ["GET /employees/{id} getEmployee", "POST /employees addEmployee"]);
    assert.deepEqual(ops[0]!.tool.inputSchema.required, ["id"]);
    assert.deepEqual(Object.keys(ops[0]!.tool.inputSchema.properties!), ["id", "fields"]);
    assert.deepEqual((ops[1]!.tool.inputSchema.properties!.body as { required: string[] }).required, ["name"]);
  });

  it("an operation without an operationId is METHOD_path; a $ref cycle ends", () => {
    const doc = { openapi: "3.0.0", paths: { "/a/{b}/c": { delete: { parameters: [{ $ref: "#/components/parameters/B" }] } } }, components: { parameters: { B: { name: "b", in: "path", schema: { $ref: "#/components/schemas/Loop" } } }, schemas: { Loop: { type: "object", properties: { next: { $ref: "#/components/schemas/Loop" } } } } } };
    const [op] = operationsOf(doc);
    assert.equal(op!.tool.name, "delete_a_b_c");
    assert.deepEqual(op!.tool.inputSchema.required, ["b"]);
  });
});

describe("a single tools/call's params", () => {
  it("are a tool's name and an arguments object", () => {
    const call = (params: unknown) => badToolCall({ jsonrpc: "2.0", id: 3, method: "tools/call", params });
    assert.equal(call({ name: "jira.search", arguments: {} }), null);
    assert.equal(call({ name: "jira.search" }), null);
    assert.match(call({})!.message, /params.name/);
    assert.match(call({ name: "a", arguments: [] })!.message, /arguments/);
    assert.match(call("x")!.message, /params must be an object/);
    assert.equal(badToolCall({ jsonrpc: "2.0", method: "tools/call", params: {} }), null, "a notification is not answered");
  });
});
