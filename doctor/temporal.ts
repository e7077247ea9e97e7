// Temporal: the server answers (over TLS and with the API key, where set) and the namespace llmgw uses exists.
import { Connection } from "@temporalio/client";
import { loadConfig } from "../common/config.ts";
import { describeTemporalConnection, temporalConnectionOptions, type TemporalConnectionOptions } from "../common/temporal-connection.ts";
import { fail, ok, within, type Check } from "./finding.ts";

export const temporal: Check = {
  name: "temporal",
  roles: ["control"],
  async run(ctx) {
    const c = loadConfig(ctx.env);
    let options: TemporalConnectionOptions;
    try {
      options = temporalConnectionOptions(c);
    } catch (err) {
      return fail(`Temporal settings: ${(err as Error).message}`, "fix the TEMPORAL_TLS_* / TEMPORAL_API_KEY_FILE settings (docs/configuration.md)");
    }
    const at = describeTemporalConnection(options);
    let conn: Connection | undefined;
    try {
      conn = await within(ctx.timeoutMs, `Temporal at ${c.TEMPORAL_ADDRESS}`, Connection.connect({ ...options, connectTimeout: ctx.timeoutMs }));
      const info = await within(ctx.timeoutMs, "Temporal", conn.workflowService.getSystemInfo({}));
      try {
        await within(ctx.timeoutMs, "Temporal", conn.workflowService.describeNamespace({ namespace: c.LLMGW_TEMPORAL_NAMESPACE }));
      } catch (err) {
        return fail(
          `Temporal ${info.serverVersion} at ${at} has no namespace "${c.LLMGW_TEMPORAL_NAMESPACE}": ${(err as Error).message}`,
          `create it: temporal operator namespace create --address ${c.TEMPORAL_ADDRESS} ${c.LLMGW_TEMPORAL_NAMESPACE} (or set LLMGW_TEMPORAL_NAMESPACE)`,
        );
      }
      return ok(`Temporal ${info.serverVersion} at ${at}, namespace "${c.LLMGW_TEMPORAL_NAMESPACE}"`);
    } catch (err) {
      return fail(
        `Temporal at ${at} is not reachable: ${(err as Error).message}`,
        "start it (bash scripts/services.sh start, or the temporal service of deploy/docker-compose.yml) or set TEMPORAL_ADDRESS (and TEMPORAL_TLS_* for a server that demands TLS)",
      );
    } finally {
      await conn?.close();
    }
  },
};
