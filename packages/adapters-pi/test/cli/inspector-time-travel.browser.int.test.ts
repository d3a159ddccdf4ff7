/**
 * Time travel in the inspector, in a real browser (Debian's chromium through playwright-core): a run whose step
 * c failed once and then succeeded shows the timeline (steps, the failed attempt, the current position) and, in
 * c's payload panel, the failed attempt's error; forking at c from the page (behind a confirmation) makes a run
 * whose link the test follows (and back: the source lists its forks) and whose resume runs only c, d and e;
 * rerun from d marks the same run, and its
 * next resume runs only d and e. With PHASEKIT_UPDATE_DOCS=1 the screenshots go to docs/images/.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { spawnChild } from "../helpers/spawn-child.js";
import { inspectorInChromium } from "./helpers/inspector-in-chromium.js";

const RUNNER = fileURLToPath(new URL("../helpers/time-travel-runner.mjs", import.meta.url));
const shots = mkdtempSync(path.join(tmpdir(), "pk-tt-shots-"));
const docsShot = (name: string) => (process.env["PHASEKIT_UPDATE_DOCS"] === "1" ? fileURLToPath(new URL(`../../../../docs/images/${name}`, import.meta.url)) : path.join(shots, name));

async function runChild(slug: string, mode = ""): Promise<string> {
  const child = spawnChild(RUNNER, [ui.repo, slug, path.join(ui.repo, "effects.log"), mode]);
  await child.exited;
  return (child.lines.find((l) => l.startsWith("status ")) ?? "status ?").slice(7);
}
const effects = (): string[] => (existsSync(path.join(ui.repo, "effects.log")) ? readFileSync(path.join(ui.repo, "effects.log"), "utf8").trim().split("\n").map((l) => l.split(" ")[0] as string) : []);

const ui = inspectorInChromium("time-travel browser test", async () => {
  // c fails once, then the run is resumed and completes: c's latest record is a success after a failed attempt.
  expect(await runChild("tt", "fail:c")).toBe("failed");
  expect(await runChild("tt")).toBe("completed");
});

afterAll(() => rmSync(shots, { recursive: true, force: true }));

describe("time travel in the inspector (chromium)", () => {
  it("shows the timeline and a failed attempt's error, forks at a step and follows the link, reruns from a step", async (ctx) => {
    const browser = ui.browser;
    if (browser === null) return ctx.skip(ui.whyNot);
    expect(effects()).toEqual(["a", "b", "c", "c", "d", "e"]);
    const page = await browser.newPage({ viewport: { width: 1200, height: 1100 } });
    await page.goto(`${ui.inspector.url}#/run/tt`);
    await page.waitForSelector("#timeline-list li[data-kind=attempt]");
    expect(await page.textContent("#timeline-list li[data-kind=attempt]")).toContain("step c failed (attempt 1): Error: c failed on purpose");
    expect(await page.locator("#timeline-list li[data-kind=step]").count()).toBe(5);
    expect(await page.textContent("#timeline-now")).toContain("now: completed");
    await page.locator("#timeline").screenshot({ path: docsShot("inspector-timeline.png") });

    await page.click('button[data-payload="c"]');
    await page.waitForSelector("#attempts li");
    expect(await page.textContent("#attempts")).toMatch(/attempt 1 at .*: c failed on purpose/);

    await page.click('button[data-fork="c"]');
    await page.waitForSelector("#confirm");
    await page.fill("#confirm-reason", "tt-fork");
    await page.screenshot({ path: docsShot("inspector-fork.png") });
    await page.click("#confirm-yes");
    await page.waitForSelector("#fork-link");
    expect(await page.textContent("#action-done")).toContain("forked run tt at c into tt-fork: 2 step(s)");
    await page.click("#fork-link");
    await page.waitForSelector("#timeline-list li[data-kind=time-travel]");
    expect(await page.textContent("h2")).toContain("tt-fork");
    expect(await page.textContent("#timeline-list")).toContain("forked from run tt at c (2 step(s) reused)");
    expect(await page.getAttribute("a.forked-from", "href")).toBe("#/run/tt");

    await page.click("a.forked-from");
    await page.waitForSelector('button[data-rerun="d"]');
    // The source links to its forks: the tree, one level each way.
    await page.waitForSelector("#forks a.fork");
    expect(await page.textContent("#forks")).toBe("forks of this run: tt-fork (at c)");
    expect(await page.getAttribute("#forks a.fork", "href")).toBe("#/run/tt-fork");
    await page.click('button[data-rerun="d"]');
    await page.waitForSelector("#confirm");
    await page.click("#confirm-yes");
    await page.waitForSelector("#action-done");
    expect(await page.textContent("#action-done")).toContain("run tt: 2 step(s) from d on (d, e) run again");
    await page.close();

    // What the page did is what the runs do: the fork runs c, d, e; the marked run d and e.
    expect(await runChild("tt-fork")).toBe("completed");
    expect(await runChild("tt")).toBe("completed");
    expect(effects().slice(6)).toEqual(["c", "d", "e", "d", "e"]);
  });
});
