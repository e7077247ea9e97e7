// `server init --temporal server`: the real Temporal server on the platform's PostgreSQL, as Temporal
// recommends for production, instead of the CLI's dev server on a file database. The three binaries
// (temporal-server, temporal-sql-tool, temporal-ui-server) are what scripts/temporal-server.sh builds
// from Go modules into the cache; init finds them there or in --temporal-server-dir. Init sets up
// Temporal's two databases with temporal-sql-tool (its own versioned schema scripts), writes the
// server's and the Web UI's configuration under the data directory, and, once llmgw-temporal
// answers, registers the namespace and llmgw's search attributes. The configuration mirrors what
// scripts/temporal-server.sh writes for development (all four services in one process).
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Connection } from "@temporalio/client";
import { msToTs } from "@temporalio/common/lib/time.js";
import proto from "@temporalio/proto";
import YAML from "yaml";
import { fail, ok, type Check } from "../../doctor/finding.ts";
import { KIND_KEY, MODEL_KEY, NODE_KEY } from "../../workflows/search-attributes.ts";
import type { Layout } from "./layout.ts";

/** The versions scripts/temporal-server.sh builds: the Temporal CLI's own "Server 1.32.0, UI 2.54.1". */
export const SERVER_VERSION = "1.32.0";
export const UI_VERSION = "2.54.1";
const SEARCH_ATTRIBUTES = [MODEL_KEY, NODE_KEY, KIND_KEY].map((k) => k.name);

export interface TemporalServerBins {
  server: string;
  sqlTool: string;
  ui: string;
}

/** Where scripts/temporal-server.sh caches the binaries. */
export const defaultServerDir = (): string => path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), ".cache"), "llmgw", "bin");

export const binsIn = (dir: string): TemporalServerBins => ({ server: path.join(dir, "temporal-server"), sqlTool: path.join(dir, "temporal-sql-tool"), ui: path.join(dir, "temporal-ui-server") });

/** The directory under the data directory that holds the server's and the UI's configuration. */
export const configDir = (layout: Layout): string => path.join(layout.dataDir, "temporal-server");

/** The preflight check: each binary runs and is the version this llmgw was tried with. */
export function temporalServerCheck(bins: TemporalServerBins): Check {
  return {
    name: "temporal",
    roles: ["control"],
    async run() {
      for (const [bin, version] of [[bins.server, SERVER_VERSION], [bins.sqlTool, SERVER_VERSION], [bins.ui, UI_VERSION]] as const) {
        const r = spawnSync(bin, ["--version"], { encoding: "utf8", timeout: 10_000 });
        if (r.error || r.status !== 0) return fail(`${bin} does not run (${r.error?.message ?? r.stderr.trim()})`, "bash scripts/temporal-server.sh install builds the three binaries from Go modules; or --temporal-server-dir DIR, or --temporal dev");
        if (!r.stdout.includes(version)) return fail(`${bin} is not version ${version} (${r.stdout.trim()})`, "bash scripts/temporal-server.sh install builds the pinned versions");
      }
      return ok(`temporal-server ${SERVER_VERSION} and its Web UI ${UI_VERSION} (${path.dirname(bins.server)}): the production server, on PostgreSQL`);
    },
  };
}

/**
 * The PostgreSQL server and role of the platform's DATABASE_URL. Temporal's two databases sit beside
 * llmgw's, named after it (llmgw: llmgw_temporal, llmgw_temporal_visibility), so two installs that
 * share a PostgreSQL server keep apart.
 */
export function pgOf(databaseUrl: string) {
  const u = new URL(databaseUrl);
  const db = decodeURIComponent(u.pathname.slice(1)) || "llmgw";
  return {
    host: u.hostname.replace(/^\[|\]$/g, "") || "127.0.0.1", port: u.port || "5432", user: decodeURIComponent(u.username), password: decodeURIComponent(u.password),
    databases: { default: `${db}_temporal`, visibility: `${db}_temporal_visibility` },
  };
}

/** Creates Temporal's databases where missing and brings their schema to this server's version; what was done, in words. */
export function setUpTemporalDatabases(bins: TemporalServerBins, databaseUrl: string): string {
  const pg = pgOf(databaseUrl);
  for (const [store, db] of Object.entries(pg.databases)) {
    const schema = store === "default" ? "postgresql/v12/temporal" : "postgresql/v12/visibility";
    // create-database is a no-op for one that exists; setup-schema -v 0.0 makes the version tables
    // (a no-op once a version is recorded); update-schema runs the embedded versioned scripts.
    for (const args of [["create-database"], ["setup-schema", "-v", "0.0"], ["update-schema", "--schema-name", schema]]) {
      // The password goes by the environment (SQL_PASSWORD), never the command line.
      const r = spawnSync(bins.sqlTool, ["--plugin", "postgres12", "--ep", pg.host, "-p", pg.port, "-u", pg.user, "--db", db, ...args], {
        encoding: "utf8",
        timeout: 300_000,
        env: { PATH: process.env.PATH, SQL_PASSWORD: pg.password },
      });
      if (r.error || r.status !== 0) throw new Error(`temporal-sql-tool ${args[0]} on database ${db} failed: ${(r.error?.message ?? r.stderr ?? "").trim().split("\n").slice(-3).join(" ")}`);
    }
  }
  return `Temporal's databases ${pg.databases.default} and ${pg.databases.visibility} at the schema of server ${SERVER_VERSION}`;
}

/** Writes the server's configuration (mode 0600: it holds the database password), its dynamic configuration and the UI's; returns the files. */
export function writeTemporalServerConfig(layout: Layout, o: { port: number; databaseUrl: string; namespace: string; owner?: { uid: number; gid: number } | undefined }): string[] {
  const dir = configDir(layout);
  const pg = pgOf(o.databaseUrl);
  const p = o.port;
  const datastore = (db: string, conns: number) => ({
    sql: { pluginName: "postgres12", databaseName: db, connectAddr: `${pg.host}:${pg.port}`, connectProtocol: "tcp", user: pg.user, password: pg.password, maxConns: conns, maxIdleConns: conns, maxConnLifetime: "1h" },
  });
  const rpc = (grpc: number, membership: number, extra: object = {}) => ({ rpc: { grpcPort: grpc, membershipPort: membership, bindOnLocalHost: true, ...extra } });
  const server = {
    log: { stdout: true, level: "warn" },
    // numHistoryShards is fixed for the life of the databases; one machine needs few.
    persistence: { defaultStore: "default", visibilityStore: "visibility", numHistoryShards: 4, datastores: { default: datastore(pg.databases.default, 20), visibility: datastore(pg.databases.visibility, 10) } },
    global: { membership: { maxJoinDuration: "30s", broadcastAddress: "127.0.0.1" }, metrics: { prometheus: { framework: "tally", timerType: "histogram", listenAddress: `127.0.0.1:${p + 9}` } } },
    services: { frontend: rpc(p, p + 5, { httpPort: p + 4 }), history: rpc(p + 1, p + 6), matching: rpc(p + 2, p + 7), worker: rpc(p + 3, p + 8) },
    clusterMetadata: {
      enableGlobalNamespace: false, failoverVersionIncrement: 10, masterClusterName: "active", currentClusterName: "active",
      clusterInformation: { active: { enabled: true, initialFailoverVersion: 1, rpcName: "frontend", rpcAddress: `127.0.0.1:${p}`, httpAddress: `127.0.0.1:${p + 4}` } },
    },
    dcRedirectionPolicy: { policy: "noop" },
    dynamicConfigClient: { filepath: path.join(dir, "dynamicconfig.yaml"), pollInterval: "10s" },
  };
  // Search attributes registered at start are usable by the next workflow, not a minute later; a
  // namespace registered at start is served within seconds.
  const dynamic = { "system.forceSearchAttributesCacheRefreshOnRead": [{ value: true }], "system.namespaceCacheRefreshInterval": [{ value: "2s" }] };
  const ui = { temporalGrpcAddress: `127.0.0.1:${p}`, host: "127.0.0.1", port: p + 1000, enableUi: true, defaultNamespace: o.namespace, cors: { allowOrigins: [`http://127.0.0.1:${p + 1000}`, `http://localhost:${p + 1000}`] } };
  const files: [string, string, number][] = [
    [path.join(dir, "config.yaml"), YAML.stringify(server), 0o600],
    [path.join(dir, "dynamicconfig.yaml"), YAML.stringify(dynamic), 0o644],
    [path.join(dir, "ui", "config", "llmgw.yaml"), YAML.stringify(ui), 0o644],
  ];
  for (const [file, text, mode] of files) {
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o750 });
    fs.writeFileSync(file, `# Written by llmgw server init (--temporal server); llmgw server init rewrites it.\n${text}`, { mode });
    fs.chmodSync(file, mode);
    if (o.owner) for (const f of [file, path.dirname(file)]) fs.chownSync(f, o.owner.uid, o.owner.gid);
  }
  return files.map(([f]) => f);
}

/** Registers the namespace (7 days' retention) and llmgw's search attributes where missing, retrying while the server warms up; what was done. */
export async function registerNamespace(address: string, namespace: string, ms: number): Promise<string> {
  const conn = await Connection.connect({ address });
  const until = Date.now() + ms;
  try {
    for (;;) {
      try {
        try {
          await conn.workflowService.describeNamespace({ namespace });
        } catch {
          await conn.workflowService.registerNamespace({ namespace, workflowExecutionRetentionPeriod: msToTs("7 days") }).catch((err: { code?: number }) => {
            if (err.code !== 6) throw err; // ALREADY_EXISTS: registered meanwhile
          });
        }
        const have = await conn.operatorService.listSearchAttributes({ namespace });
        const missing = SEARCH_ATTRIBUTES.filter((a) => !(a in (have.customAttributes ?? {})));
        if (missing.length) {
          const keyword = proto.temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD;
          await conn.operatorService.addSearchAttributes({ namespace, searchAttributes: Object.fromEntries(missing.map((a) => [a, keyword])) });
        }
        return `namespace "${namespace}" with the search attributes ${SEARCH_ATTRIBUTES.join(", ")}`;
      } catch (err) {
        // A namespace just registered is unknown to the other services until their caches refresh.
        if (Date.now() > until) throw new Error(`could not register namespace ${namespace}: ${(err as Error).message}`);
        await new Promise((r) => setTimeout(r, 1000));
      }
    }
  } finally {
    await conn.close();
  }
}
