/**
 * `phasekit ui --store postgres://…` in a real browser (Debian's chromium through playwright-core): the runs of a
 * real server's namespace in the table, a run's steps and a step's payload, a live run paused from the page (the
 * holder, another runWorkflow on the same server, ends paused) and the page updated by the server's push.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runWorkflow, type RunResult } from "@phasekit/adapters-pi";
import { startInspector, type Inspector } from "../../adapters-pi/src/cli/ui-server.js";
import { closeStores } from "../../adapters-pi/src/cli/store-runs.js";
import { openPostgresPlanStore, type PostgresPlanStore } from "../src/index.js";
import { startCluster } from "./helpers/cluster.js";

const started = startCluster();
// playwright-core is adapters-pi's dev dependency (its browser test): taken from there, not installed twice, and
// typed here by the little this test uses of it.
interface Page {
  on(event: "pageerror", f: (e: Error) => void): void;
  goto(url: string): Promise<unknown>;
  waitForSelector(selector: string, o?: { timeout?: number }): Promise<unknown>;
  $$eval<R>(selector: string, f: (els: Array<{ getAttribute(n: string): string | null }>) => R): Promise<R>;
  textContent(selector: string): Promise<string | null>;
  click(selector: string): Promise<void>;
  fill(selector: string, value: string): Promise<void>;
  waitForFunction(f: () => boolean): Promise<unknown>;
  close(): Promise<void>;
}
interface Browser {
  newPage(o?: { viewport?: { width: number; height: number } }): Promise<Page>;
  close(): Promise<void>;
}
const playwright = pathToFileURL(createRequire(new URL("../../adapters-pi/package.json", import.meta.url)).resolve("playwright-core")).href;
const { chromium } = (await import(playwright)) as { chromium: { launch(o: { executablePath: string; args: string[]; headless: boolean }): Promise<Browser> } };
// The closed-network flags of adapters-pi's browser test (importing that file would register its tests here).
const CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"];

function findChromium(): string | null {
  if (process.env["PHASEKIT_CHROMIUM"]) return process.env["PHASEKIT_CHROMIUM"];
  try {
    return execFileSync("which", ["chromium"], { encoding: "utf8" }).trim() || null;
  } catch {
    return null;
  }
}

if (!started.ok) {
  describe.skip(`inspector on PostgreSQL (SKIPPED: ${started.reason})`, () => it("needs PostgreSQL", () => undefined));
} else {
  const { cluster } = started;
  const namespace = "browser";
  const repoRoot = mkdtempSync(path.join(tmpdir(), "pk-pg-ui-"));
  let browser: Browser | null = null;
  let whyNot = "";
  let inspector: Inspector;
  let store: PostgresPlanStore;
  let release: () => void = () => undefined;
  let live: Promise<RunResult<string>>;

  beforeAll(async () => {
    const executablePath = findChromium();
    if (executablePath === null) whyNot = "no chromium on PATH (apt-get install -y chromium)";
    else browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS, headless: true }).catch((e: unknown) => ((whyNot = String(e).split("\n")[0] ?? ""), null));
    store = await openPostgresPlanStore({ connectionString: cluster.url, namespace });
    await runWorkflow({ repoRoot, target: "shipped", toolName: "builder", store }, (ctx) => ctx.step("plan", {}, () => "the plan"));
    let inFirst!: () => void;
    const first = new Promise<void>((r) => (inFirst = r));
    const gate = new Promise<void>((r) => (release = r));
    live = runWorkflow({ repoRoot, target: "live", toolName: "builder", store }, async (ctx) => {
      await ctx.step("s1", {}, async () => (inFirst(), await gate, 1));
      await ctx.step("s2", {}, () => 2);
      return "done";
    });
    await first;
    inspector = await startInspector({ roots: { repoRoot, store: { kind: "postgres", connectionString: cluster.url, namespace, label: `postgres:${namespace}` } }, defDirs: [], port: 0 });
  }, 60_000);

  afterAll(async () => {
    release();
    await live?.catch(() => undefined);
    await browser?.close();
    await inspector?.close();
    await closeStores();
    await store?.close();
    cluster.destroy();
  });

  describe("phasekit ui --store postgres://… in chromium", () => {
    it("lists the server's runs, shows a run's steps and payload, pauses a live run from the page", async (ctx) => {
      if (browser === null) return ctx.skip(whyNot);
      const page = await browser.newPage({ viewport: { width: 1100, height: 800 } });
      const pageErrors: string[] = [];
      page.on("pageerror", (e) => pageErrors.push(String(e)));
      try {
        await page.goto(inspector.url);
        await page.waitForSelector("#runs tbody tr");
        expect((await page.$$eval("#runs tbody tr", (rows) => rows.map((r) => r.getAttribute("data-run")))).sort()).toEqual(["live", "shipped"]);
        expect(await page.textContent('#runs tr[data-run="shipped"]')).toContain("completed");

        await page.click('#runs a[href="#/run/shipped"]');
        await page.waitForSelector('#steps tr[data-step="plan"]');
        expect(await page.textContent('#steps tr[data-step="plan"]')).toContain("completed");
        await page.click('button[data-payload="plan"]');
        await page.waitForSelector("#payload-output");
        expect(await page.textContent("#payload-output")).toBe('"the plan"\n');

        await page.click('a[href="#/"]');
        await page.click('#runs a[href="#/run/live"]');
        await page.waitForSelector('#steps tr[data-step="s1"]');
        expect(await page.textContent('#steps tr[data-step="s1"]')).toContain("in-flight");
        await page.click('#actions button[data-action="pause"]');
        await page.fill("#confirm-reason", "lunch");
        await page.click("#confirm-yes");
        await page.waitForFunction(() => (globalThis as unknown as { document: { getElementById(id: string): { textContent: string | null } | null } }).document.getElementById("pending")?.textContent === "pause: lunch");
        release();
        expect((await live).status).toBe("paused");
        // The holder's end reaches the open page through the server's push (the store's signature changed).
        await page.waitForSelector('#steps tr[data-step="s1"] .status.completed', { timeout: 15_000 });
        expect(pageErrors).toEqual([]);
      } finally {
        await page.close();
      }
    }, 60_000);
  });
}
