/**
 * The run page of a 10,000-step run over HTTP: the first screen is the newest 200 steps (with verdicts) and a
 * cursor to the page before, each page the 200 steps next to the last, in the order `phasekit show` lists them;
 * a page asked by a cursor stays the same page after the run records more steps, and the cursors give every
 * step of it once, either way. Steps run ten at a time, so many start in the same millisecond (the order's ties).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createReporter, requestPause, runWorkflow } from "@phasekit/adapters-pi";
import { runDetail } from "../../src/cli/run-view.js";
import { startInspector, type Inspector } from "../../src/cli/ui-server.js";

const TOKEN = "t0ken-for-paging";
const quiet = () => createReporter({ onChange: () => undefined });
const N = 10_000;
let repo: string;
let inspector: Inspector;

beforeAll(async () => {
  repo = mkdtempSync(path.join(tmpdir(), "pk-paging-"));
  await runWorkflow({ repoRoot: repo, target: "huge", toolName: "t", createReporter: quiet }, async (ctx) => {
    for (let b = 0; b < N / 10; b++) await Promise.all(Array.from({ length: 10 }, (_, j) => ctx.step(`s${b * 10 + j}`, { b, j }, () => j)));
  });
  inspector = await startInspector({ roots: { repoRoot: repo }, defDirs: [], port: 0, token: TOKEN });
}, 120_000);

afterAll(async () => {
  await inspector?.close();
  rmSync(repo, { recursive: true, force: true });
});

type Page = { steps: Array<{ stepId: string; verdict?: { decision: string } }>; stepsPage: { offset: number; limit: number; total: number; before: string | null; after: string | null } };
async function page(id: string, query = ""): Promise<{ status: number; body: Page & { error?: { code: string; message: string } } }> {
  const res = await fetch(`${new URL(inspector.url).origin}/api/runs/${id}${query}`, { headers: { "x-phasekit-token": TOKEN } });
  return { status: res.status, body: (await res.json()) as Page & { error?: { code: string; message: string } } };
}

/** Every step of run `id`, from the newest page by `before` cursors, or from the first by `after` cursors. */
async function walk(id: string, way: "before" | "after"): Promise<string[]> {
  const pages: string[][] = [];
  for (let p = (await page(id, way === "before" ? "" : "?stepOffset=0")).body; ; ) {
    pages.push(p.steps.map((s) => s.stepId));
    const next = way === "before" ? p.stepsPage.before : p.stepsPage.after;
    if (next === null) return (way === "before" ? pages.reverse() : pages).flat();
    p = (await page(id, `?${way === "before" ? "stepsBefore" : "stepsAfter"}=${encodeURIComponent(next)}`)).body;
  }
}

describe("the run page of a 10,000-step run", () => {
  it("first screen: the newest 200 steps with verdicts and a cursor; each page by a cursor is the 200 steps next to it, in show's order", async () => {
    const shown = (await runDetail({ repoRoot: repo }, "huge", Date.now())).steps.map((s) => s.stepId);
    expect(shown).toHaveLength(N);
    const first = (await page("huge")).body;
    expect(first.stepsPage).toEqual({ offset: N - 200, limit: 200, total: N, before: expect.any(String), after: null });
    expect(first.steps.map((s) => s.stepId)).toEqual(shown.slice(N - 200));
    expect(first.steps.every((s) => s.verdict?.decision === "reuse-if-same-input")).toBe(true);

    // Each page is the 200 steps next to the one before it (a whole walk: the property test and the run below).
    let before = first.stepsPage.before;
    for (let k = 2; k <= 4; k++) {
      const p = (await page("huge", `?stepsBefore=${encodeURIComponent(before as string)}`)).body;
      expect(p.steps.map((s) => s.stepId)).toEqual(shown.slice(N - 200 * k, N - 200 * (k - 1)));
      before = p.stepsPage.before;
    }
    let p = (await page("huge", "?stepOffset=0")).body;
    for (let k = 1; k <= 3; k++) {
      expect(p.steps.map((s) => s.stepId)).toEqual(shown.slice(200 * (k - 1), 200 * k));
      p = (await page("huge", `?stepsAfter=${encodeURIComponent(p.stepsPage.after as string)}`)).body;
    }
  }, 60_000);

  it("a page asked by its cursor is the same page after the run recorded more steps; the cursors give every step once, either way", async () => {
    await runWorkflow({ repoRoot: repo, target: "growing", toolName: "t", createReporter: quiet }, async (ctx) => {
      for (let i = 0; i < 450; i++) await ctx.step(`g${i}`, { i }, () => i);
      await requestPause({ repoRoot: repo, target: "growing", reason: "more later" });
      return ctx.step("g450", {}, () => 450);
    });
    const newest = (await page("growing")).body;
    const earlier = (await page("growing", `?stepsBefore=${encodeURIComponent(newest.stepsPage.before as string)}`)).body;
    // Resumed: the first 450 steps are reused (no new record), 100 more are recorded after them.
    await runWorkflow({ repoRoot: repo, target: "growing", toolName: "t", createReporter: quiet }, async (ctx) => {
      for (let i = 0; i < 550; i++) await ctx.step(`g${i}`, { i }, () => i);
    });
    const again = (await page("growing", `?stepsBefore=${encodeURIComponent(newest.stepsPage.before as string)}`)).body;
    expect(again.stepsPage.total).toBe(newest.stepsPage.total + 100);
    expect(again.steps.map((s) => s.stepId)).toEqual(earlier.steps.map((s) => s.stepId));
    const later = (await page("growing", `?stepsAfter=${encodeURIComponent(earlier.stepsPage.after as string)}`)).body;
    expect(later.steps.map((s) => s.stepId)).toEqual(newest.steps.map((s) => s.stepId));
    // The whole run by its cursors, either way: each step once, in show's order.
    const shown = (await runDetail({ repoRoot: repo }, "growing", Date.now())).steps.map((s) => s.stepId);
    expect(new Set(shown).size).toBe(again.stepsPage.total);
    expect(await walk("growing", "before")).toEqual(shown);
    expect(await walk("growing", "after")).toEqual(shown);
  }, 60_000);

  it("a cursor that is not one is 400 INVALID_OPTIONS naming the parameter", async () => {
    const r = await page("huge", "?stepsBefore=..%2Fetc~1");
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ code: "INVALID_OPTIONS", message: expect.stringContaining("stepsBefore") });
    expect((await page("huge", "?stepsAfter=2026-01-01T00:00:00.000Z~1&stepsBefore=2026-01-01T00:00:00.000Z~1")).status).toBe(400);
  });
});
