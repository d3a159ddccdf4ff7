import { describe, it, expect } from "vitest";

// CI runs the run-log goals suite in smoke mode only: it proves every contender and measurement still works;
// the figures come from `pnpm bench` (docs/benchmarks.md).
describe("bench smoke: run-log goals", () => {
  it("every row of the suite is measured (finite figures, a goal, a verdict)", async () => {
    process.env.BENCH_SMOKE = "1";
    const { runGoals } = await import("../bench/suites/run-log-goals.bench.js");
    const rows = await runGoals();
    expect(rows.length).toBe(13);
    for (const r of rows) {
      expect(Number.isFinite(r.subjectNs) && Number.isFinite(r.baselineNs), r.subject).toBe(true);
      expect(r.goal).toMatch(/^≤/);
      expect(typeof r.met).toBe("boolean");
    }
  }, 180_000);
});
