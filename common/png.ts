// PNG chunks: read, write, strip metadata and add an iTXt entry. ComfyUI writes the whole workflow
// into tEXt chunks of every picture; clients must not receive it, but must receive the licence.
import { deflateSync } from "node:zlib";

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
/** Textual chunks: the metadata ComfyUI (and others) leave in a picture. */
const TEXT_CHUNKS = new Set(["tEXt", "zTXt", "iTXt"]);

let table: Uint32Array | undefined;
/** CRC-32 (ISO 3309), table-driven; node:zlib has crc32 only from Node 22. */
export function crc32(buf: Uint8Array): number {
  if (!table) {
    table = new Uint32Array(256);
    for (let n = 0; n < 256; n++) {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      table[n] = c >>> 0;
    }
  }
  let c = 0xffffffff;
  for (const b of buf) c = table[(c ^ b) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

export interface PngChunk {
  type: string;
  data: Buffer;
}

export function isPng(buf: Uint8Array): boolean {
  return buf.length >= 8 && Buffer.from(buf.subarray(0, 8)).equals(SIGNATURE);
}

/** The chunks of a PNG, each CRC checked; throws on anything that is not a whole PNG. */
export function readChunks(png: Buffer): PngChunk[] {
  if (!isPng(png)) throw new Error("not a PNG");
  const out: PngChunk[] = [];
  let at = 8;
  while (at + 12 <= png.length) {
    const len = png.readUInt32BE(at);
    const type = png.toString("latin1", at + 4, at + 8);
    if (at + 12 + len > png.length) throw new Error(`PNG chunk ${type} runs past the end`);
    const data = png.subarray(at + 8, at + 8 + len);
    if (crc32(png.subarray(at + 4, at + 8 + len)) !== png.readUInt32BE(at + 8 + len)) throw new Error(`PNG chunk ${type} has a bad CRC`);
    out.push({ type, data });
    at += 12 + len;
    if (type === "IEND") return out;
  }
  throw new Error("PNG has no IEND");
}

export function writeChunks(chunks: PngChunk[]): Buffer {
  const parts: Buffer[] = [SIGNATURE];
  for (const c of chunks) {
    const head = Buffer.alloc(8);
    head.writeUInt32BE(c.data.length, 0);
    head.write(c.type, 4, "latin1");
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), c.data])), 0);
    parts.push(head, c.data, crc);
  }
  return Buffer.concat(parts);
}

/** An uncompressed international text chunk (keyword, UTF-8 text). */
export function iTXt(keyword: string, text: string): PngChunk {
  return { type: "iTXt", data: Buffer.concat([Buffer.from(keyword, "latin1"), Buffer.from([0, 0, 0, 0, 0]), Buffer.from(text, "utf8")]) };
}

export function tEXt(keyword: string, text: string): PngChunk {
  return { type: "tEXt", data: Buffer.concat([Buffer.from(keyword, "latin1"), Buffer.from([0]), Buffer.from(text, "latin1")]) };
}

/** Text entries of a PNG (tEXt and uncompressed iTXt), keyword → text. */
export function textEntries(png: Buffer): Record<string, string> {
  const out: Record<string, string> = {};
  for (const c of readChunks(png)) {
    const nul = c.data.indexOf(0);
    if (nul < 0) continue;
    const key = c.data.toString("latin1", 0, nul);
    if (c.type === "tEXt") out[key] = c.data.toString("latin1", nul + 1);
    if (c.type === "iTXt" && c.data[nul + 1] === 0) {
      const lang = c.data.indexOf(0, nul + 3);
      const translated = c.data.indexOf(0, lang + 1);
      out[key] = c.data.toString("utf8", translated + 1);
    }
  }
  return out;
}

/** The picture with every text chunk removed and `entries` added as iTXt before the image data. */
export function replaceText(png: Buffer, entries: Record<string, string>): Buffer {
  const kept = readChunks(png).filter((c) => !TEXT_CHUNKS.has(c.type));
  const ihdr = kept.findIndex((c) => c.type === "IHDR");
  kept.splice(ihdr + 1, 0, ...Object.entries(entries).map(([k, v]) => iTXt(k, v)));
  return writeChunks(kept);
}

/** A truecolour RGB PNG from a pixel function; what the ComfyUI stand-in renders. */
export function encodeRgb(width: number, height: number, pixel: (x: number, y: number) => [number, number, number], extra: PngChunk[] = []): Buffer {
  const raw = Buffer.alloc((width * 3 + 1) * height);
  for (let y = 0; y < height; y++) {
    const row = y * (width * 3 + 1);
    raw[row] = 0; // filter: none
    for (let x = 0; x < width; x++) raw.set(pixel(x, y), row + 1 + x * 3);
  }
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 2, 0, 0, 0], 8); // 8-bit, RGB, deflate, adaptive filtering, no interlace
  return writeChunks([{ type: "IHDR", data: ihdr }, ...extra, { type: "IDAT", data: deflateSync(raw) }, { type: "IEND", data: Buffer.alloc(0) }]);
}

/** Width and height from the IHDR chunk. */
export function pngSize(png: Buffer): { width: number; height: number } {
  const ihdr = readChunks(png)[0]!;
  return { width: ihdr.data.readUInt32BE(0), height: ihdr.data.readUInt32BE(4) };
}
