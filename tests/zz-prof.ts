import { startPlatform, uniqueModel } from "./helpers/platform.ts";
const p = await startPlatform();
const r = await p.ctl(["model", "serve", uniqueModel("tm"), "--engine", "sim", "--replicas", "1", "--wait", "--json"]);
console.log("serve", r.code);
await p.stop();
