/**
 * The inspector page in a real browser: Debian's chromium driven by playwright-core (never a downloaded
 * browser), on a closed network. Opens the runs table, clicks into a run, sees its diagram with the current
 * position, its steps and journal, watches a live run finish, and takes a screenshot. With
 * PHASEKIT_UPDATE_DOCS=1 the screenshot is written to docs/images/inspector.png.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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

describe("phasekit ui in chromium", () => {
  it("shows the runs, a run's diagram with its position, its steps and journal; a live run refreshes", async (ctx) => {
    if (browser === null) return ctx.skip(whyNot);
    const page = await browser.newPage({ viewport: { width: 1100, height: 800 } });
    const external: string[] = [];
    page.on("request", (r) => {
      if (!r.url().startsWith(inspector.url)) external.push(r.url());
    });
    await page.goto(inspector.url);
    await page.waitForSelector("#runs tbody tr");
    const ids = await page.$$eval("#runs tbody tr", (rows) => rows.map((r) => r.getAttribute("data-run")));
    expect(ids.sort()).toEqual(["crashed", "done", "live", "old", "shipping"]);
    expect(await page.textContent('#runs tr[data-run="crashed"]')).toContain("crashed");

    await page.click('#runs a[href="#/run/shipping"]');
    await page.waitForSelector("#diagram .current");
    expect(await page.textContent("#diagram .current")).toContain("Test");
    expect(await page.$$eval("#diagram .group", (g) => g.map((x) => x.getAttribute("data-node")))).toEqual(["p1"]);
    expect(await page.textContent('#steps tr[data-step="plan"]')).toContain("completed");
    expect(await page.textContent("#journal")).toContain("paused");
    const shot = process.env["PHASEKIT_UPDATE_DOCS"] === "1" ? fileURLToPath(new URL("../../../../docs/images/inspector.png", import.meta.url)) : path.join(shots, "inspector.png");
    await page.screenshot({ path: shot, fullPage: true });
    expect(statSync(shot).size).toBeGreaterThan(10_000);

    // A live run: in flight, then (after its runner goes on) completed without a reload.
    await page.click('a[href="#/"]');
    await page.click('#runs a[href="#/run/live"]');
    await page.waitForSelector('#steps tr[data-step="s1"]');
    expect(await page.textContent('#steps tr[data-step="s1"]')).toContain("in-flight");
    fx.live.send("go");
    await page.waitForSelector('#steps tr[data-step="s1"] .status.completed', { timeout: 15_000 });
    expect(external).toEqual([]);
    await page.close();
  });
});
