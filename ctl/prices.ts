// ctl prices set MODEL [--prompt X] [--cached-prompt X] [--completion X] (per million tokens) [--picture X] [--mesh X] [--batch-discount PERCENT]
import { parseArgs } from "node:util";
import { adminClient, CtlError } from "./admin-client.ts";
import { printJson } from "./output.ts";

export async function pricesCommand(argv: string[]): Promise<void> {
  const [cmd, ...rest] = argv;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: {
      prompt: { type: "string" },
      "cached-prompt": { type: "string" },
      completion: { type: "string" },
      picture: { type: "string" },
      mesh: { type: "string" },
      "batch-discount": { type: "string" },
      json: { type: "boolean" },
    },
  });
  const model = positionals[0];
  if (cmd !== "set" || !model) throw new CtlError("usage: llmgw ctl prices set MODEL [--prompt X] [--cached-prompt X] [--completion X] [--picture X] [--mesh X] [--batch-discount PERCENT]  (per million tokens / per item)");
  const n = (v: string | undefined) => (v === undefined ? undefined : Number(v));
  const body = {
    promptPerMTok: n(values.prompt),
    cachedPromptPerMTok: n(values["cached-prompt"]),
    completionPerMTok: n(values.completion),
    perPicture: n(values.picture),
    perMesh: n(values.mesh),
    batchDiscountPercent: n(values["batch-discount"]),
  };
  const out = await adminClient().request("PUT", `/models/${encodeURIComponent(model)}/prices`, body);
  return values.json ? printJson(out) : void process.stdout.write(`prices set for ${model}\n`);
}
