// What the Temporal client's AsyncLocalStorage does to every promise (not part of the test suite):
//   node --import tsx tests/bench/promise-hooks.ts   (needs the test services' Temporal)
// Times 2 million awaits: before any Temporal connection, after Connection.connect() (which runs its
// first call inside an AsyncLocalStorage, turning on promise hooks for the whole process on Node 20),
// and after the storage is disabled again, as common/temporal.ts does.
import { Connection } from "@temporalio/client";
import { config } from "../../common/config.ts";

const N = 2_000_000;
async function awaits(label: string): Promise<number> {
  const t = performance.now();
  for (let i = 0; i < N; i++) await Promise.resolve(i);
  const ms = performance.now() - t;
  process.stdout.write(`${label.padEnd(34)} ${ms.toFixed(0).padStart(6)} ms for ${N} awaits\n`);
  return ms;
}

const before = await awaits("before connecting");
const connection = await Connection.connect({ address: config().TEMPORAL_ADDRESS });
const connected = await awaits("after Connection.connect()");
connection.callContextStorage.disable();
const disabled = await awaits("after callContextStorage.disable()");
process.stdout.write(`ratio connected / before: ${(connected / before).toFixed(2)}×, disabled / before: ${(disabled / before).toFixed(2)}×\n`);
process.stdout.write(JSON.stringify({ awaits: N, before_ms: before, connected_ms: connected, disabled_ms: disabled }) + "\n");
await connection.close();
