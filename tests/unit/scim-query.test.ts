// SCIM list parameters (gateway/scim/query.ts): scimmy's filter parser lets some broken filters
// through; these are refused as 400 invalidFilter, and pages are held to their bounds.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import SCIMMY from "scimmy";
import { listParams, MAX_RESULTS, parseFilter } from "../../gateway/scim/query.ts";
import { declareScim } from "../../gateway/scim/resources.ts";

declareScim();
const users = SCIMMY.Resources.User.schema.definition;
const refused = (f: () => unknown, scimType: string) =>
  assert.throws(f, (e: unknown) => e instanceof SCIMMY.Types.Error && e.status === 400 && e.scimType === scimType);

describe("SCIM list parameters", () => {
  it("takes RFC 7644's filters, extension attributes and value paths included", () => {
    for (const f of ['userName eq "ada"', 'emails[type eq "work" and value co "@"]', 'not (active eq true) or displayName pr', "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department sw \"R\"", 'meta.lastModified gt "2026-01-01T00:00:00Z"'])
      assert.ok(parseFilter(users, f).length >= 1, f);
  });

  it("refuses a comparison without a value, a dangling operator, an unknown attribute and bad syntax", () => {
    for (const f of ["userName eq", 'userName eq "a" and', 'or userName eq "a"', 'shoeSize eq "42"', 'emails[kind eq "work"]', "(((", 'userName like "a"'])
      refused(() => parseFilter(users, f), "invalidFilter");
    refused(() => listParams(users, { filter: "  " }), "invalidFilter");
  });

  it("bounds pages and checks the other parameters", () => {
    assert.deepEqual(listParams(users, {}), { count: MAX_RESULTS });
    assert.deepEqual(listParams(users, { startIndex: "0", count: "100000" }), { startIndex: 1, count: MAX_RESULTS });
    assert.deepEqual(listParams(users, { count: "-5" }), { count: 0 });
    assert.equal(listParams(users, { attributes: ["userName", "emails.value"] }).attributes, "userName,emails.value");
    refused(() => listParams(users, { count: "ten" }), "invalidValue");
    refused(() => listParams(users, { startIndex: "1.5" }), "invalidValue");
    refused(() => listParams(users, { sortOrder: "sideways" }), "invalidValue");
    refused(() => listParams(users, { sortBy: "shoeSize" }), "invalidValue");
    refused(() => listParams(users, { excludedAttributes: "userName,shoeSize" }), "invalidValue");
  });
});
