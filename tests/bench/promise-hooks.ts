// What the Temporal client's AsyncLocalStorage does to every promise (not part of the test suite):
//   node --import tsx tests/bench/promise-hooks.ts   (needs the test services' Temporal)
// Times 2 million awaits: before any Temporal connection; after common/temporal.ts's client has
// connected and made a workflow call (its call context kept synchronously, so no promise hooks);
// and after the stock client has done the same (its AsyncLocalStorage turns promise hooks on for
// the whole process on Node 20, for good, so this runs last).
import { Connection } from "@temporalio/client";
import { config } from "../../common/config.ts";
import { temporalClient } from "../../common/temporal.ts";

const N = 2_000_000;
async function awaits(label: string): Promise<number> {
  const t = performance.now();
  for (let i = 0; i < N; i++) await Promise.resolve(i);
  const ms = performance.now() - t;
  process.stdout.write(`${label.padEnd(48)} ${ms.toFixed(0).padStart(6)} ms for ${N} awaits\n`);
  return ms;
}

const before = await awaits("before connecting");
const ours = await temporalClient();
await ours.client.workflowService.getSystemInfo({});
await ours.client.workflow.list({ pageSize: 1 })[Symbol.asyncIterator]().next();
const withOurs = await awaits("after our client connected and listed workflows");
await ours.close();
const stock = await Connection.connect({ address: config().TEMPORAL_ADDRESS });
const withStock = await awaits("after the stock Connection.connect()");
process.stdout.write(`ratio ours / before: ${(withOurs / before).toFixed(2)}×, stock / before: ${(withStock / before).toFixed(2)}×\n`);
process.stdout.write(JSON.stringify({ awaits: N, before_ms: before, our_client_ms: withOurs, stock_client_ms: withStock }) + "\n");
await stock.close();
