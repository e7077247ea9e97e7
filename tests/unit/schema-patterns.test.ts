// The patterns the OpenAPI documents carry for rules the server checks in code (base64, media URLs):
// the pattern and the check agree on each sample, so the document says what the server does.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { z } from "zod";
import { base64, mediaUrl } from "../../gateway/client-api/schemas.ts";

const B64 = ["", "aGVsbG8=", "aGVsbG8h", "aGVsbA==", "aGVsbA=", "aGVsbA===", "a", "ab==cd==", "====", "@@@@", "aGVs bG8=", "+/+/", "AAA=", "AA=A"];
const URLS = ["https://example.com/a.png", "http://x", "HTTPS://example.com", "ftp://example.com", "https://a b", "https://é.fr", `data:image/png;base64,aGVsbG8=`, "data:image/png;base64,aGVsbG8", "data:audio/wav;base64,aGVsbG8=", "data:image/png;base64,", "data:Image/png;base64,aGk=", "data:image/svg+xml;base64,aGk="];

function agree(schema: z.ZodType, samples: string[]) {
  const pattern = new RegExp((z.toJSONSchema(schema, { io: "input" }) as { pattern: string }).pattern);
  for (const s of samples) assert.equal(pattern.test(s), schema.safeParse(s).success, `${JSON.stringify(s)}: the pattern and the check disagree`);
}

describe("the OpenAPI patterns of rules checked in code", () => {
  it("base64: the pattern and isBase64 agree", () => agree(base64(), B64.filter((s) => s !== "")));
  it("a media URL: the pattern and the check agree", () => {
    agree(mediaUrl("image"), URLS);
    agree(mediaUrl("audio"), URLS);
  });
});
