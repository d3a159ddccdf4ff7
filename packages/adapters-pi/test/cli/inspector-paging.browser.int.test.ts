/**
 * The run page's steps in chromium: a run opened by its address is asked for once (early.js asks while the page's
 * modules load, app.js takes that answer), the newest steps come first, and "← earlier" / "later →" follow the
 * pages' cursors to the steps next to them.
 */
import { describe, expect, it } from "vitest";
import { createReporter, runWorkflow } from "@phasekit/adapters-pi";
import { backdate, inspectorInChromium } from "./helpers/inspector-in-chromium.js";

const ui = inspectorInChromium("inspector paging browser test", async (repo) => {
  await runWorkflow({ repoRoot: repo, target: "pages", toolName: "t", createReporter: () => createReporter({ onChange: () => undefined }) }, async (ctx) => {
    for (let i = 0; i < 450; i++) await ctx.step(`s${i}`, { i }, () => i);
  });
  // Every request the test sees is then one the page made on its own or for a click (no refresh for the run's
  // just-written files: in a CI run one came between the clicks and was counted as a paging request).
  backdate(repo);
});

describe("the run page's steps in chromium", () => {
  it("asks for the run once, shows the newest steps, and pages by the cursors", async (ctx) => {
    const browser = ui.browser;
    if (browser === null) return ctx.skip(ui.whyNot);
    const page = await browser.newPage();
    const asked: string[] = [];
    page.on("request", (r) => {
      const u = new URL(r.url());
      if (u.pathname === "/api/runs/pages") asked.push(u.search);
    });
    await page.goto(`${ui.inspector.url}#/run/pages`);
    await page.waitForSelector("#steps-pager");
    const firstStep = () => page.getAttribute("#steps tbody tr:first-child", "data-step");
    expect(await page.textContent("#steps-pager")).toContain("steps 251–450 of 450");
    expect(await firstStep()).toBe("s250");
    expect(await page.locator("#steps tbody tr").count()).toBe(200);
    expect(await page.locator("#steps-later").count()).toBe(0);
    expect(asked).toEqual([""]);
    expect(await page.evaluate(() => (globalThis as { phasekitEarly?: unknown }).phasekitEarly)).toBeUndefined();

    await page.click("#steps-earlier");
    await page.waitForFunction(() => (document.getElementById("steps-pager")?.textContent ?? "").includes("steps 51–250"));
    expect(await firstStep()).toBe("s50");
    await page.click("#steps-earlier");
    await page.waitForFunction(() => (document.getElementById("steps-pager")?.textContent ?? "").includes("steps 1–50 of 450"));
    expect(await firstStep()).toBe("s0");
    expect(await page.locator("#steps-earlier").count()).toBe(0);
    await page.click("#steps-later");
    await page.waitForFunction(() => (document.getElementById("steps-pager")?.textContent ?? "").includes("steps 51–250"));
    expect(await firstStep()).toBe("s50");
    expect(asked.slice(1).every((q) => /^\?steps(Before|After)=/.test(q))).toBe(true);
    await page.close();
  });
});

declare const document: { getElementById(id: string): { textContent: string | null } | null };
