// The Fetch RPC's work: weights onto this node, into a content-addressed cache under <dataDir>/weights:
//
//   weights/sha256/<hex>/<name>        one file whose sha256 the catalog gives
//   weights/url/<sha256(url)>/<name>   one file without a checksum
//   weights/sets/<sha256(manifest)>/   a mirror set; .complete once every file matched its sha256
import fs from "node:fs";
import path from "node:path";
import * as grpc from "@grpc/grpc-js";
import { z } from "zod";
import type { FetchProgress } from "../../common/generated/proto/llmgw/agent/v1/FetchProgress.ts";
import { SHA256_HEX, sha256Of } from "./checksum.ts";
import { downloadFile, type OnBytes } from "./download.ts";
import { FetchError } from "./errors.ts";
import { checkLocal } from "./local.ts";
import { COMPLETE_MARKER, parseManifest } from "./manifest.ts";
import { refusePickles } from "./pickle.ts";
import { shareRead } from "./share.ts";
import { progressReporter } from "./progress.ts";
import { classifySource } from "./sources.ts";
import { isHttpUrl, readSmall } from "./transport.ts";

const MANIFEST_MAX_BYTES = 16 << 20;

export const fetchRequestSchema = z.object({
  source: z.string().min(1, "source is required").max(4096),
  sha256: z.union([z.literal(""), z.string().regex(SHA256_HEX, "sha256 must be 64 hex digits")]).default(""),
  allowPickle: z.boolean().default(false),
});
export type FetchRequestInput = z.input<typeof fetchRequestSchema>;

export class Fetcher {
  /** `readerGid`: the engine user's group, given read access to what is fetched; null: none. */
  constructor(
    private readonly weightsDir: string,
    private readonly readerGid: number | null = null,
  ) {}

  private share(target: string): void {
    if (this.readerGid !== null) shareRead(this.weightsDir, target, this.readerGid);
  }

  /** Streams progress to `emit`; the last message is done, with the path the engine loads. */
  async fetch(input: FetchRequestInput, emit: (p: FetchProgress) => void): Promise<void> {
    const parsed = fetchRequestSchema.safeParse(input);
    if (!parsed.success) throw new FetchError(grpc.status.INVALID_ARGUMENT, parsed.error.issues.map((i) => i.message).join("; "));
    const req = parsed.data;
    const progress = progressReporter(emit);
    const src = classifySource(req.source);
    switch (src.kind) {
      case "hub":
        // The engine downloads hub models itself; nothing to hold here.
        return progress.done(src.id, 0, 0);
      case "local": {
        const got = await checkLocal(src.path, req.sha256, req.allowPickle);
        return progress.done(got.path, got.size, got.size);
      }
      case "url": {
        const name = fileName(src.url);
        refusePickles([name], req.allowPickle);
        const key = req.sha256 ? path.join("sha256", req.sha256.toLowerCase()) : path.join("url", sha256Of(src.url));
        const dest = path.join(this.weightsDir, key, name);
        let last = { bytes: 0, total: 0 };
        await downloadFile({ source: src.url, dest, sha256: req.sha256 || undefined }, (bytes, total) => {
          last = { bytes, total };
          progress.update(bytes, total);
        });
        const size = fs.statSync(dest).size;
        this.share(dest);
        return progress.done(dest, size, last.total || size);
      }
      case "set":
        return this.fetchSet(src.manifest, req, progress);
    }
  }

  private async fetchSet(
    manifestSource: string,
    req: z.output<typeof fetchRequestSchema>,
    progress: ReturnType<typeof progressReporter>,
  ): Promise<void> {
    const bytes = await readSmall(manifestSource, MANIFEST_MAX_BYTES);
    const digest = sha256Of(bytes);
    if (req.sha256 && digest !== req.sha256.toLowerCase()) {
      throw new FetchError(grpc.status.DATA_LOSS, `${manifestSource}: sha256 is ${digest}, expected ${req.sha256.toLowerCase()}`);
    }
    const manifest = parseManifest(bytes, manifestSource);
    refusePickles(
      manifest.files.map((f) => f.name),
      req.allowPickle,
    );
    const dir = path.join(this.weightsDir, "sets", digest);
    const total = manifest.files.reduce((n, f) => n + f.size, 0);
    const marker = path.join(dir, COMPLETE_MARKER);
    if (fs.existsSync(marker)) {
      this.share(dir); // fetched before an engine user was configured, perhaps
      return progress.done(dir, total, total);
    }

    let before = 0; // bytes of the files already done
    for (const f of manifest.files) {
      const onBytes: OnBytes = (b) => progress.update(before + b, total);
      await downloadFile({ source: memberSource(manifestSource, f.name), dest: path.join(dir, ...f.name.split("/")), size: f.size, sha256: f.sha256 }, onBytes);
      before += f.size;
      progress.update(before, total);
    }
    fs.writeFileSync(marker, JSON.stringify({ completedAt: new Date().toISOString(), files: manifest.files }) + "\n", { mode: 0o600 });
    this.share(dir);
    progress.done(dir, total, total);
  }
}

/** The file name an URL's path ends in ("weights" when it has none). */
function fileName(url: string): string {
  const base = path.posix.basename(decodeURIComponent(new URL(url).pathname));
  return base && base !== "." && base !== ".." && !base.includes("\\") ? base : "weights";
}

/** Where a set's member is, relative to its manifest. Names were checked by parseManifest. */
function memberSource(manifestSource: string, name: string): string {
  if (isHttpUrl(manifestSource)) return new URL(name.split("/").map(encodeURIComponent).join("/"), manifestSource).href;
  return path.join(path.dirname(manifestSource), ...name.split("/"));
}
