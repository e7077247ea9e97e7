// glTF binary (GLB) containers: parse, write, and set asset.extras (where the licence goes).
const MAGIC = 0x46546c67; // "glTF"
const JSON_CHUNK = 0x4e4f534a;
const BIN_CHUNK = 0x004e4942;

export interface Glb {
  json: Record<string, unknown> & { asset: { version: string; generator?: string; extras?: Record<string, unknown> } };
  bin: Buffer | null;
}

export function isGlb(buf: Uint8Array): boolean {
  return buf.length >= 12 && Buffer.from(buf).readUInt32LE(0) === MAGIC;
}

/** A GLB's JSON and binary chunks; throws on anything that is not a whole glTF 2 binary. */
export function parseGlb(buf: Buffer): Glb {
  if (!isGlb(buf)) throw new Error("not a GLB");
  if (buf.readUInt32LE(4) !== 2) throw new Error(`GLB version ${buf.readUInt32LE(4)}, expected 2`);
  if (buf.readUInt32LE(8) !== buf.length) throw new Error("GLB length does not match its header");
  let at = 12;
  let json: Glb["json"] | undefined;
  let bin: Buffer | null = null;
  while (at + 8 <= buf.length) {
    const len = buf.readUInt32LE(at);
    const type = buf.readUInt32LE(at + 4);
    const data = buf.subarray(at + 8, at + 8 + len);
    if (type === JSON_CHUNK) json = JSON.parse(data.toString("utf8")) as Glb["json"];
    else if (type === BIN_CHUNK) bin = Buffer.from(data);
    at += 8 + len;
  }
  if (!json?.asset?.version) throw new Error("GLB has no JSON chunk with asset.version");
  return { json, bin };
}

function pad(buf: Buffer, fill: number): Buffer {
  const extra = (4 - (buf.length % 4)) % 4;
  return extra ? Buffer.concat([buf, Buffer.alloc(extra, fill)]) : buf;
}

export function writeGlb(g: Glb): Buffer {
  const json = pad(Buffer.from(JSON.stringify(g.json), "utf8"), 0x20);
  const chunks: Buffer[] = [];
  const head = (len: number, type: number) => {
    const h = Buffer.alloc(8);
    h.writeUInt32LE(len, 0);
    h.writeUInt32LE(type, 4);
    return h;
  };
  chunks.push(head(json.length, JSON_CHUNK), json);
  if (g.bin) {
    const bin = pad(g.bin, 0);
    chunks.push(head(bin.length, BIN_CHUNK), bin);
  }
  const body = Buffer.concat(chunks);
  const header = Buffer.alloc(12);
  header.writeUInt32LE(MAGIC, 0);
  header.writeUInt32LE(2, 4);
  header.writeUInt32LE(12 + body.length, 8);
  return Buffer.concat([header, body]);
}

/** The mesh with asset.extras replaced by `extras` (the engine's own extras dropped). */
export function withAssetExtras(buf: Buffer, extras: Record<string, unknown>): Buffer {
  const g = parseGlb(buf);
  return writeGlb({ json: { ...g.json, asset: { ...g.json.asset, extras } }, bin: g.bin });
}

/** A mesh of `n` triangles (a fan), as the ComfyUI stand-in makes for picture-to-mesh. */
export function triangleFan(n: number, generator: string): Buffer {
  const verts = new Float32Array((n + 2) * 3);
  for (let i = 0; i <= n; i++) {
    const a = (i / n) * Math.PI * 2;
    verts.set([Math.cos(a), Math.sin(a), 0], (i + 1) * 3);
  }
  const idx = new Uint16Array(n * 3);
  for (let i = 0; i < n; i++) idx.set([0, i + 1, i + 2], i * 3);
  const vbytes = Buffer.from(verts.buffer);
  const ibytes = Buffer.from(idx.buffer);
  const bin = Buffer.concat([vbytes, ibytes]);
  return writeGlb({
    json: {
      asset: { version: "2.0", generator },
      scene: 0,
      scenes: [{ nodes: [0] }],
      nodes: [{ mesh: 0 }],
      meshes: [{ primitives: [{ attributes: { POSITION: 0 }, indices: 1 }] }],
      buffers: [{ byteLength: bin.length }],
      bufferViews: [
        { buffer: 0, byteOffset: 0, byteLength: vbytes.length },
        { buffer: 0, byteOffset: vbytes.length, byteLength: ibytes.length },
      ],
      accessors: [
        { bufferView: 0, componentType: 5126, count: n + 2, type: "VEC3", min: [-1, -1, 0], max: [1, 1, 0] },
        { bufferView: 1, componentType: 5123, count: n * 3, type: "SCALAR" },
      ],
    },
    bin,
  });
}
