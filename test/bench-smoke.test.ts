import { describe, it, expect } from "vitest";
import { readdirSync } from "node:fs";

// CI runs the run-log goals suite in smoke mode only: it proves every contender and measurement still works;
// the figures come from `pnpm bench` (docs/benchmarks.md).
describe("bench smoke: run-log goals", () => {
  it("every row of the suite is measured (finite figures, a goal, a verdict)", async () => {
    process.env.BENCH_SMOKE = "1";
    const { runGoals } = await import("../bench/suites/run-log-goals.bench.js");
    const rows = await runGoals();
    // The 13 goals of the issue (plus the first resume after close, and a goal on already-sorted input per
    // fingerprint size), and report-only
    // floor rows that explain the fingerprint figures.
    const goals = rows.filter((r) => r.goal !== undefined);
    expect(goals.length).toBe(17);
    for (const r of rows) expect(Number.isFinite(r.subjectNs) && Number.isFinite(r.baselineNs), r.subject).toBe(true);
    for (const r of goals) {
      expect(r.goal).toMatch(/^≤/);
      expect(typeof r.met).toBe("boolean");
    }
  }, 180_000);
});

// The ctx.step suite (first run: miss vs raw fdatasync; resumed run: reuse hits) and the PostgreSQL step suite
// (its own throwaway cluster) in smoke mode: every row comes out finite.
describe("bench smoke: ctx.step and the PostgreSQL store", () => {
  const finite = (rows: Array<{ subject: string; subjectNs: number; baselineNs: number }>): void => {
    expect(rows.length).toBeGreaterThan(0);
    for (const r of rows) expect(Number.isFinite(r.subjectNs) && Number.isFinite(r.baselineNs), r.subject).toBe(true);
  };
  it("runWorkflow ctx.step rows are measured", async () => {
    process.env.BENCH_SMOKE = "1";
    const { suite } = await import("../packages/adapters-pi/bench/run-step.bench.js");
    const rows = await suite.run();
    expect(rows.map((r) => [r.subject, r.baseline])).toEqual([
      ["ctx.step miss, 10 KB output", "raw append + fdatasync of the same bytes"],
      ["ctx.step miss, 10 KB output", "SqliteSaver.put, synchronous=FULL"],
      ["the miss's floor: its records, sync, checks and value work, no engine", "raw append + fdatasync of the same bytes"],
      ["ctx.step miss, 10 KB output", "the miss's floor (above)"],
      ["ctx.step reuse hit, 10 KB output", "budget 50 µs"],
      ["ctx.step reuse hit, small output", "budget 50 µs"],
      ["ctx.step reuse hit, small output", "direct call"],
    ]);
    finite(rows);
  }, 120_000);
  it("one-history rows are measured (bytes after close, files after many acquisitions)", async () => {
    process.env.BENCH_SMOKE = "1";
    const { suite } = await import("../bench/suites/history-goals.bench.js");
    const rows = await suite.run();
    expect(rows).toHaveLength(13);
    finite(rows);
  }, 120_000);
  it("validate rows are measured (its fixture still compiles)", async () => {
    const { suite } = await import("../packages/adapters-pi/bench/validate.bench.js");
    finite(await suite.run());
  }, 120_000);
  // CI installs PostgreSQL (PHASEKIT_REQUIRE_POSTGRES=1); a machine without it skips this one.
  (process.env.PHASEKIT_REQUIRE_POSTGRES === "1" ? it : it.skipIf(!hasPostgres()))("PostgreSQL step rows are measured", async () => {
    const { suite } = await import("../packages/store-postgres/bench/pg-step.bench.js");
    finite(await suite.run());
  }, 180_000);
});

function hasPostgres(): boolean {
  try {
    return readdirSync("/usr/lib/postgresql").length > 0;
  } catch {
    return false;
  }
}
