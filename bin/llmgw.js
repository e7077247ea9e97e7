#!/usr/bin/env node
// The one executable. TypeScript sources run through tsx's loader, so there is no build step.
import { register } from "tsx/esm/api";

register();
await import("../cli.ts");
