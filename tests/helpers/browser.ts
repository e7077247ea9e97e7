// Debian's Chromium, headless, driven by playwright-core (downloaded browser builds do not run here).
// The flags keep it off the network it cannot reach (background services, updates, sync).
import { chromium, type Browser } from "playwright-core";

export const CHROMIUM = process.env.LLMGW_CHROMIUM ?? "/usr/bin/chromium";

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
}
