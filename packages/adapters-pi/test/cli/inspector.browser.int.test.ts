/**
 * The inspector page in a real browser: Debian's chromium driven by playwright-core (never a downloaded
 * browser), on a closed network. Is refused without the launch's token; with it, opens the runs table, clicks
 * into a run, sees its diagram with the current position, its steps and journal and a step's payload, pauses
 * and resumes a live run from the page (each behind a confirmation), watches it finish, and takes screenshots.
 * With PHASEKIT_UPDATE_DOCS=1 the screenshots are written to docs/images/.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, statSync, utimesSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createReporter, runWorkflow } from "@phasekit/adapters-pi";
import { startInspector, type Inspector } from "../../src/cli/ui-server.js";
import { DEFS, fixtureRepo, type FixtureRepo } from "./helpers/fixture-runs.js";

/** The closed-network flags: without them chromium keeps calling out and filling the network with refusals. */
export const CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"];

function findChromium(): string | null {
  if (process.env["PHASEKIT_CHROMIUM"]) return process.env["PHASEKIT_CHROMIUM"];
  try {
    return execFileSync("which", ["chromium"], { encoding: "utf8" }).trim() || null;
  } catch {
    return null;
  }
}

let browser: Browser | null = null;
let whyNot = "";
let fx: FixtureRepo;
let inspector: Inspector;
const shots = mkdtempSync(path.join(tmpdir(), "pk-shots-"));

beforeAll(async () => {
  const executablePath = findChromium();
  if (executablePath === null) whyNot = "no chromium on PATH (CI installs it with .ci/setup-chromium.sh; locally: apt-get install -y chromium)";
  else {
    try {
      browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS, headless: true });
    } catch (error) {
      whyNot = `chromium at ${executablePath} did not start: ${String(error).split("\n")[0]}`;
    }
  }
  if (browser === null) process.stderr.write(`\n!!! SKIPPING the inspector browser test: ${whyNot}\n\n`);
  fx = await fixtureRepo();
  inspector = await startInspector({ roots: { repoRoot: fx.repo }, defDirs: [DEFS], port: 0 });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await inspector?.close();
  await fx?.close();
  rmSync(shots, { recursive: true, force: true });
});

/** The page's `document` as functions evaluated in the browser use it (this file is typed without the DOM library). */
type PageDocument = { getElementById(id: string): { textContent: string | null } | null };

const docsShot = (name: string) => (process.env["PHASEKIT_UPDATE_DOCS"] === "1" ? fileURLToPath(new URL(`../../../../docs/images/${name}`, import.meta.url)) : path.join(shots, name));

describe("phasekit ui in chromium", () => {
  it("without the launch's token (or with another) the browser gets nothing; a bad link is an error, not 'Loading…'", async (ctx) => {
    if (browser === null) return ctx.skip(whyNot);
    const page = await browser.newPage();
    for (const url of [inspector.origin, `${inspector.origin}?token=not-the-token`, `${inspector.origin}app.js`]) {
      const res = await page.goto(url);
      expect(res?.status(), url).toBe(403);
      expect(await page.textContent("body"), url).not.toContain("shipping");
    }
    await page.goto(`${inspector.url}#/run/%E0%A4%A`);
    await page.waitForSelector("#error");
    expect(await page.textContent("#error")).toMatch(/URI|malformed/i);
    await page.close();
  });

  it("shows the runs, a run's diagram, steps, journal and a step's payload; pauses and resumes a live run; a live run refreshes", async (ctx) => {
    if (browser === null) return ctx.skip(whyNot);
    const page = await browser.newPage({ viewport: { width: 1100, height: 800 } });
    const external: string[] = [];
    const pageErrors: string[] = [];
    page.on("pageerror", (e) => pageErrors.push(String(e)));
    const streams: string[] = [];
    page.on("request", (r) => {
      if (!r.url().startsWith(inspector.origin)) external.push(r.url());
      if (r.url().endsWith("/events")) streams.push(new URL(r.url()).pathname);
    });
    await page.goto(inspector.url);
    await page.waitForSelector("#runs tbody tr");
    const ids = await page.$$eval("#runs tbody tr", (rows) => rows.map((r) => r.getAttribute("data-run")));
    expect(ids.sort()).toEqual(["crashed", "done", "live", "old", "shipping"]);
    expect(await page.textContent('#runs tr[data-run="crashed"]')).toContain("crashed");
    // Filters: a search by id, a status, a tool; kept while the table refreshes.
    const shownIds = () => page.$$eval("#runs tbody tr", (rows) => rows.map((r) => r.getAttribute("data-run")).sort());
    await page.fill("#runs-search", "ship");
    expect(await shownIds()).toEqual(["shipping"]);
    await page.fill("#runs-search", "");
    await page.selectOption("#runs-status", "completed");
    expect(await shownIds()).toEqual(["done", "old"]);
    await page.selectOption("#runs-status", "");
    await page.selectOption("#runs-tool", "live-bot");
    expect(await shownIds()).toEqual(["crashed", "live"]);
    await page.fill("#runs-search", "zzz");
    expect(await page.textContent("#runs-none")).toBe("No run matches (5 in all).");
    await page.fill("#runs-search", "");
    await page.selectOption("#runs-tool", "");
    expect(await shownIds()).toHaveLength(5);

    await page.click('#runs a[href="#/run/shipping"]');
    await page.waitForSelector("#diagram .current");
    expect(await page.textContent("#diagram .current")).toContain("Test");
    expect(await page.$$eval("#diagram .group", (g) => g.map((x) => x.getAttribute("data-node")))).toEqual(["p1"]);
    expect(await page.textContent('#steps tr[data-step="plan"]')).toContain("completed");
    expect(await page.textContent("#journal")).toContain("paused");
    const shot = docsShot("inspector.png");
    await page.screenshot({ path: shot, fullPage: true });
    expect(statSync(shot).size).toBeGreaterThan(10_000);

    // A step's payload: the input's fingerprint (the input itself is not kept) and the output as pretty JSON.
    await page.click('button[data-payload="plan"]');
    await page.waitForSelector("#payload-output");
    expect(await page.textContent("#payload-input")).toContain("not recorded");
    expect(await page.textContent("#payload-output")).toBe('"the plan"\n');
    await page.screenshot({ path: docsShot("inspector-payload.png"), fullPage: true });

    // A live run: in flight; paused and resumed from the page, each behind a confirmation.
    await page.click('a[href="#/"]');
    await page.click('#runs a[href="#/run/live"]');
    await page.waitForSelector('#steps tr[data-step="s1"]');
    expect(await page.textContent('#steps tr[data-step="s1"]')).toContain("in-flight");
    expect(await page.textContent('#steps tr[data-step="s1"]')).not.toContain("stopped mid-step");
    await page.click('#actions button[data-action="pause"]');
    await page.waitForSelector("#confirm");
    expect(await page.textContent("#pending")).toBe("none"); // nothing happens before the confirmation
    await page.click("#confirm-no");
    expect(await page.$("#confirm")).toBeNull();
    await page.click('#actions button[data-action="pause"]');
    await page.fill("#confirm-reason", "lunch");
    await page.screenshot({ path: docsShot("inspector-confirm.png"), fullPage: true });
    await page.click("#confirm-yes");
    await page.waitForSelector('#actions button[data-action="resume"]');
    expect(await page.textContent("#pending")).toBe("pause: lunch");
    expect(await page.textContent("#action-done")).toContain("pause requested for run live");
    await page.click('#actions button[data-action="resume"]');
    await page.click("#confirm-yes");
    await page.waitForSelector('#actions button[data-action="pause"]');
    expect(await page.textContent("#pending")).toBe("none");
    expect(await page.textContent("#action-done")).toContain("pause request withdrawn");
    // ... and then (after its runner goes on) completed without a reload.
    fx.live.send("go");
    await page.waitForSelector('#steps tr[data-step="s1"] .status.completed', { timeout: 15_000 });
    // The live run's page was updated by the server's push (an event stream per run page), not by polling.
    expect(streams).toContain("/api/runs/live/events");
    expect(external).toEqual([]);
    expect(pageErrors).toEqual([]);
    await page.close();
  });

  it("a `changed` that brings what is shown draws nothing (the elements under the reader stay); a real change is drawn", async (ctx) => {
    if (browser === null) return ctx.skip(whyNot);
    const repo = mkdtempSync(path.join(tmpdir(), "pk-calm-"));
    const run = (n: number, reenter: boolean) =>
      runWorkflow({ repoRoot: repo, target: "calm", toolName: "t", reenter, createReporter: () => createReporter({ onChange: () => undefined }) }, async (ctx) => {
        for (let i = 0; i < n; i++) await ctx.step(`s${i}`, { i }, () => i);
      });
    await run(2, false);
    const own = await startInspector({ roots: { repoRoot: repo }, defDirs: [], port: 0 });
    const page = await browser.newPage();
    type Marked = { getElementById(id: string): { dataset: Record<string, string | undefined> } | null };
    // Functions evaluated in the page: they reach its document themselves (nothing of this file's scope goes along).
    const looks = async () => Number(await page.evaluate(() => (globalThis as unknown as { document: Marked }).document.getElementById("updated")?.dataset.looks ?? "0"));
    const mark = () => page.evaluate(() => (globalThis as unknown as { document: Marked }).document.getElementById("steps")?.dataset.mark);
    try {
      await page.goto(`${own.url}#/run/calm`);
      await page.waitForSelector('tr[data-step="s1"]');
      await page.evaluate(() => void (((globalThis as unknown as { document: Marked }).document.getElementById("steps") as { dataset: Record<string, string> }).dataset.mark = "kept"));
      // A touch of the run's files changes what the server watches, so it says `changed`; the answer is the same.
      const before = await looks();
      utimesSync(path.join(repo, "ai_plan", "calm", "workflow.json"), new Date(), new Date());
      await page.waitForFunction((n) => Number((globalThis as unknown as { document: Marked }).document.getElementById("updated")?.dataset.looks ?? "0") > n, before);
      expect(await mark()).toBe("kept");
      // A step more is a real change: drawn.
      await run(3, true);
      await page.waitForSelector('tr[data-step="s2"]');
      expect(await mark()).toBeUndefined();
    } finally {
      await page.close();
      await own.close();
      rmSync(repo, { recursive: true, force: true });
    }
  });

  it("a large output comes in pages: 'Load more' until all of it is shown", async (ctx) => {
    if (browser === null) return ctx.skip(whyNot);
    const repo = mkdtempSync(path.join(tmpdir(), "pk-big-"));
    const rows = Array.from({ length: 4000 }, (_, i) => ({ i, text: `row ${i} 🧪` }));
    await runWorkflow({ repoRoot: repo, target: "big", toolName: "t", createReporter: () => createReporter({ onChange: () => undefined }) }, (ctx) => ctx.step("blob", {}, () => ({ rows })));
    const own = await startInspector({ roots: { repoRoot: repo }, defDirs: [], port: 0 });
    const page = await browser.newPage();
    try {
      await page.goto(`${own.url}#/run/big`);
      await page.click('button[data-payload="blob"]');
      await page.waitForSelector("#payload-more");
      const first = (await page.textContent("#payload-output")) ?? "";
      expect(first.length).toBe(64 * 1024);
      let clicks = 0;
      while ((await page.$("#payload-more")) !== null) {
        const before = ((await page.textContent("#payload-output")) ?? "").length;
        await page.click("#payload-more");
        // A function, not a string: the page's CSP (script-src 'self') refuses eval, as it should.
        await page.waitForFunction((n) => ((globalThis as unknown as { document: PageDocument }).document.getElementById("payload-output")?.textContent ?? "").length > n, before);
        clicks++;
      }
      expect(clicks).toBeGreaterThan(0);
      expect(JSON.parse((await page.textContent("#payload-output")) ?? "")).toEqual({ rows });
    } finally {
      await page.close();
      await own.close();
      rmSync(repo, { recursive: true, force: true });
    }
  });
});
