// MCP servers: the tool servers behind /mcp (GET /mcp/servers; views hold no credential). Adding
// one (the same JSON `ctl mcp add` sends), testing it (its tools listed over a connection of its
// own) and removing it are for platform-admin, as are the routes.
import { useState } from "react";
import { api } from "../api.ts";
import { useT } from "../messages/index.ts";
import { ErrorBox, Section, Table, when } from "../parts/common.tsx";
import { JsonForm } from "../parts/JsonForm.tsx";
import { useLoad } from "../parts/load.ts";

interface Server {
  name: string;
  kind: string;
  url: string | null;
  command: string[];
  timeoutMs: number;
  ratePerMin: number | null;
  updatedAt: string;
}
interface Tested {
  ok: boolean;
  tools: string[];
  error?: string;
}

const EXAMPLE = '{"name": "jira", "url": "https://mcp.example.com/mcp"}';

export function McpServers() {
  const t = useT();
  const servers = useLoad(() => api.get<{ data: Server[] }>("/mcp/servers").then((b) => b.data));
  const [error, setError] = useState<unknown>();
  const [tested, setTested] = useState<{ name: string; result: Tested }>();
  const done = () => {
    setError(undefined);
    servers.reload();
  };
  const add = (body: unknown) => void api.post("/mcp/servers", body).then(done, setError);
  const remove = (s: Server) => {
    if (confirm(`${t.admin.remove} ${s.name}?`)) void api.del(`/mcp/servers/${encodeURIComponent(s.name)}`).then(done, setError);
  };
  const test = (s: Server) => void api.post<Tested>(`/mcp/servers/${encodeURIComponent(s.name)}/test`).then((result) => setTested({ name: s.name, result }), setError);
  return (
    <>
      <h1>{t.mcp.title}</h1>
      <Section title={t.mcp.servers}>
        <ErrorBox error={servers.error ?? error} />
        <Table
          caption={t.mcp.servers}
          head={[t.col.name, t.col.kind, t.mcp.target, t.mcp.timeout, t.mcp.rate, t.guard.updated, t.col.actions]}
          rows={(servers.data ?? []).map((s) => [
            s.name,
            s.kind,
            s.url ?? s.command.join(" "),
            `${s.timeoutMs} ms`,
            s.ratePerMin ?? "—",
            when(s.updatedAt),
            <span className="actions" key="a">
              <button type="button" onClick={() => test(s)} aria-label={`${t.mcp.test} ${s.name}`}>
                {t.mcp.test}
              </button>
              <button type="button" onClick={() => remove(s)} aria-label={`${t.admin.remove} ${s.name}`}>
                {t.admin.remove}
              </button>
            </span>,
          ])}
        />
        {tested ? (
          <p role="status" className={tested.result.ok ? "notice" : "error"}>
            {tested.name}: {tested.result.ok ? `${t.mcp.tools}: ${tested.result.tools.join(", ") || "—"}` : tested.result.error}
          </p>
        ) : null}
        <JsonForm label={t.mcp.document} submit={t.mcp.add} example={EXAMPLE} onSend={add} />
      </Section>
    </>
  );
}
