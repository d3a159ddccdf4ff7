// Child of liveness.int.test.ts: a runner whose wall clock runs SKEW_MS off (every `new Date()` and `Date.now()`
// in this process: negative = behind, positive = ahead), so its lock refreshes carry mtimes that far off. Runs
// <repoRoot>/ai_plan/<slug> with a 2 s stale time, waits inside step s0 for `go` on stdin, then runs s1.
// Reports JSON lines: in, end, rejected.
import { createInterface } from "node:readline";

const [repoRoot, slug, skew = "-30000"] = process.argv.slice(2);
const SKEW_MS = Number(skew);
const RealDate = Date;
class SkewedDate extends RealDate {
  constructor(...args) {
    if (args.length === 0) super(RealDate.now() + SKEW_MS);
    else super(...args);
  }
  static now() {
    return RealDate.now() + SKEW_MS;
  }
}
globalThis.Date = SkewedDate;
const { runWorkflow } = await import("../../dist/index.js");
const say = (obj) => process.stdout.write(`${JSON.stringify(obj)}\n`);
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const go = async () => {
  for (let r = await lines.next(); !r.done; r = await lines.next()) if (r.value.trim() === "go") return;
  throw new Error("stdin ended before go");
};
try {
  const run = await runWorkflow({ repoRoot, target: slug, toolName: "skewed", lock: { staleMs: 2_000, updateMs: 1_000 } }, async (ctx) => {
    await ctx.step("s0", 0, async () => {
      say({ event: "in", stepId: "s0" });
      await go();
      return 0;
    });
    return ctx.step("s1", 1, async () => 1);
  });
  say({ event: "end", status: run.status, reason: run.reason ?? null });
} catch (error) {
  say({ event: "rejected", code: error?.code, message: String(error?.message) });
}
process.exit(0);
