/**
 * The setup the inspector's browser tests share: one chromium (or why there is none: the tests then skip, saying
 * so) and one inspector over a fresh repo, started before the file's tests and closed after them.
 */
import { lstatSync, mkdtempSync, readdirSync, rmSync, utimesSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll } from "vitest";
import { startInspector, type Inspector } from "../../../src/cli/ui-server.js";
import { launchChromium } from "./chromium.js";

/** Filled in by the file's beforeAll: read its fields inside the tests, not at the module's top level. */
export type InspectorInChromium = { browser: Browser | null; whyNot: string; repo: string; inspector: Inspector };

/**
 * Registers the file's beforeAll/afterAll. `what` names the test in the skip notice; `prepare` fills the repo
 * before the inspector starts (runs, children).
 */
export function inspectorInChromium(what: string, prepare?: (repo: string) => Promise<void>): InspectorInChromium {
  const ui: InspectorInChromium = { browser: null, whyNot: "", repo: "", inspector: undefined as unknown as Inspector };
  beforeAll(async () => {
    const launched = await launchChromium();
    if (launched.browser === null) {
      ui.whyNot = launched.whyNot;
      process.stderr.write(`\n!!! SKIPPING the ${what}: ${ui.whyNot}\n\n`);
    } else ui.browser = launched.browser;
    ui.repo = mkdtempSync(path.join(tmpdir(), "pk-ui-"));
    await prepare?.(ui.repo);
    ui.inspector = await startInspector({ roots: { repoRoot: ui.repo }, defDirs: [], port: 0 });
  }, 60_000);
  afterAll(async () => {
    await ui.browser?.close();
    await ui.inspector?.close();
    if (ui.repo !== "") rmSync(ui.repo, { recursive: true, force: true });
  });
  return ui;
}

/**
 * Dates every file and folder under `dir` a minute back. The inspector's event stream says `changed` for every look
 * within 2.5 s of a file's time stamp (cli/run-watch.ts, RACY_MS), so a page opened right after its run was written
 * refreshes a few times on its own; a test that counts the page's requests wants none it did not cause.
 */
export function backdate(dir: string): void {
  const then = new Date(Date.now() - 60_000);
  for (const name of readdirSync(dir)) {
    const p = path.join(dir, name);
    if (lstatSync(p).isDirectory()) backdate(p);
    utimesSync(p, then, then);
  }
  utimesSync(dir, then, then);
}
