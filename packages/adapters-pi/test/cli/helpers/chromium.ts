/** Debian's chromium for the browser tests (never a downloaded browser), on a closed network. */
import { execFileSync } from "node:child_process";
import { chromium, type Browser } from "playwright-core";

/** The closed-network flags: without them chromium keeps calling out and filling the network with refusals. */
export const CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"];

/** A headless chromium, or why there is none (the caller skips, saying so). */
export async function launchChromium(): Promise<{ browser: Browser } | { browser: null; whyNot: string }> {
  let executablePath: string | null = process.env["PHASEKIT_CHROMIUM"] ?? null;
  try {
    executablePath ??= execFileSync("which", ["chromium"], { encoding: "utf8" }).trim() || null;
  } catch {
    executablePath = null;
  }
  if (executablePath === null) return { browser: null, whyNot: "no chromium on PATH (CI installs it with .ci/setup-chromium.sh; locally: apt-get install -y chromium)" };
  try {
    return { browser: await chromium.launch({ executablePath, args: CHROMIUM_ARGS, headless: true }) };
  } catch (error) {
    return { browser: null, whyNot: `chromium at ${executablePath} did not start: ${String(error).split("\n")[0]}` };
  }
}
