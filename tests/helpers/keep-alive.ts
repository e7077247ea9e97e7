// The test process's fetch (and the openai client's, which uses it) drops an idle connection after
// 4 s, far below the platform's 65 s. Tests block their event loop in `execFileSync` (p.ctl); a
// pooled connection the server closed meanwhile looks alive when the loop wakes, and the next
// request on it fails with "fetch failed" (UND_ERR_SOCKET). That happened once on CI, at the first
// admin request after about a minute of ctl calls.
import { Agent, setGlobalDispatcher } from "undici";

setGlobalDispatcher(new Agent({ keepAliveTimeout: 4_000, keepAliveMaxTimeout: 4_000 }));
