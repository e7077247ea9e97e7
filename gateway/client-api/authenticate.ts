// Who is calling: the API key from the headers, looked up in the cache (no store read on a hit).
// Every failure is a 401 in the API's shape, naming what is wrong with the key, never the key.
import type { IncomingHttpHeaders } from "node:http";
import { keyFromHeaders, type KeyCache, type KeyInfo } from "../auth/key-cache.ts";
import type { BatchKeys } from "../auth/batch-keys.ts";
import { BATCH_CREDENTIAL_PREFIX } from "../../common/batch-credential.ts";
import { ApiError } from "../errors.ts";

/** `batches`: a batch's lines arrive with a batch credential, which stands for the batch's key. */
export async function authenticate(keys: KeyCache, headers: IncomingHttpHeaders, batches?: BatchKeys): Promise<KeyInfo> {
  const key = keyFromHeaders(headers);
  if (!key) throw new ApiError("authentication", "no API key: send it as `Authorization: Bearer <key>` or `x-api-key`", { code: "missing_api_key" });
  const info = batches && key.startsWith(BATCH_CREDENTIAL_PREFIX) ? await batches.lookup(key) : await keys.lookup(key);
  if (!info) throw new ApiError("authentication", "invalid API key", { code: "invalid_api_key" });
  if (info.revoked) throw new ApiError("authentication", "this API key was revoked", { code: "revoked_api_key" });
  if (info.expiresAt !== null && info.expiresAt <= Date.now()) throw new ApiError("authentication", "this API key has expired", { code: "expired_api_key" });
  return info;
}
