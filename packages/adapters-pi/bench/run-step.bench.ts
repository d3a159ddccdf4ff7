/** The overhead of `ctx.step` on a step that does nothing (reuse hit and miss) vs calling the function directly. */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { BenchRow, BenchSuite } from "../../../bench/harness.js";
import { medians } from "../../../bench/harness.js";
import { createReporter } from "../src/run/reporter.js";
import { runWorkflow } from "../src/run/run-workflow.js";

const PRECOMPLETED = 200;
const noop = (): number => 1;

export const suite: BenchSuite = {
  title: "runWorkflow ctx.step overhead",
  description:
    "One runWorkflow whose body runs the loop. Hit: ctx.step on one of 200 pre-completed ids with the same input (control check, fingerprint, artifact read and verify; no write). Miss: a fresh step id per call (control check, started record, workflow.json CAS write, artifact, completed record, second workflow.json write; each durable with fsync). Baseline: calling the same no-op function directly.",
  async run() {
    const repoRoot = mkdtempSync(path.join(tmpdir(), "phasekit-bench-step-"));
    const quiet = createReporter({ headless: true, stream: { write: () => true } });
    const run = await runWorkflow(
      { repoRoot, target: "bench-step", toolName: "bench", maxSteps: Number.MAX_SAFE_INTEGER, createReporter: () => quiet },
      async (ctx): Promise<BenchRow[]> => {
        for (let i = 0; i < PRECOMPLETED; i++) await ctx.step(`hit-${i}`, { i }, noop);
        let hit = 0;
        let miss = 0;
        const m = await medians({
          hit: async () => {
            const i = hit++ % PRECOMPLETED;
            await ctx.step(`hit-${i}`, { i }, noop);
          },
          miss: async () => {
            const i = miss++;
            await ctx.step(`miss-${i}`, { i }, noop);
          },
          direct: async () => {
            await noop();
          },
        });
        const direct = m.direct ?? NaN;
        return [
          { subject: "ctx.step, reuse hit (no-op step)", baseline: "direct call", subjectNs: m.hit ?? NaN, baselineNs: direct, goal: "report" },
          { subject: "ctx.step, miss (no-op step runs)", baseline: "direct call", subjectNs: m.miss ?? NaN, baselineNs: direct, goal: "report" },
        ];
      },
    );
    if (run.status !== "completed") throw new Error(`bench run ended ${run.status}`);
    return run.result;
  },
};
