// The test process's fetch (and the openai client's, which uses it) drops an idle connection after
// 4 s, far below the platform's 65 s. A test whose event loop is blocked (execFileSync, as p.ctl
// once was; the Slurm and PostgreSQL helpers still are, briefly) does not see a server close its
// pooled connection meanwhile; the connection looks alive when the loop wakes, and the next request
// on it fails with "fetch failed" (UND_ERR_SOCKET). That happened once on CI, at the first admin
// request after about a minute of ctl calls.
import { Agent, setGlobalDispatcher } from "undici";

setGlobalDispatcher(new Agent({ keepAliveTimeout: 4_000, keepAliveMaxTimeout: 4_000 }));
