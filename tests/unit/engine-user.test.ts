// LLMGW_ENGINE_USER resolved once at agent start (agent/supervisor/engine-user.ts): a real user's
// ids from `id`, a clear refusal for a missing user or an agent that could not switch to it.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { resolveEngineUser } from "../../agent/supervisor/engine-user.ts";

test("no engine user configured: engines run as the agent's user", () => {
  assert.equal(resolveEngineUser(undefined), null);
  assert.equal(resolveEngineUser(""), null);
});

test("an existing user resolves to the ids `id` gives", () => {
  const me = execFileSync("id", ["-un"], { encoding: "utf8" }).trim();
  const uid = Number(execFileSync("id", ["-u"], { encoding: "utf8" }));
  const gid = Number(execFileSync("id", ["-g"], { encoding: "utf8" }));
  assert.deepEqual(resolveEngineUser(me, uid), { name: me, uid, gid });
});

test("a missing user, a malformed name, and a non-root agent are refused with the setting named", () => {
  assert.throws(() => resolveEngineUser("llmgw-no-such-user-x9", 0), /LLMGW_ENGINE_USER "llmgw-no-such-user-x9": no such user on this node.*useradd/);
  assert.throws(() => resolveEngineUser("bad name;rm", 0), /LLMGW_ENGINE_USER "bad name;rm" is not a user name/);
  assert.throws(() => resolveEngineUser("root", 1000), /LLMGW_ENGINE_USER "root" \(uid 0\) needs the agent to run as root; it runs as uid 1000/);
});
