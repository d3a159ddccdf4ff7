// Child of run-workflow.control.int.test.ts: runs a 6-step workflow in <repoRoot>/ai_plan/<slug> and lets the
// test choose where it waits for `next` on stdin: `between` (after every step), `in:<k>` (inside step k, after
// its work started) or `free` (never). Reports JSON lines: ran (inside a step fn), between, in, end, rejected.
import { createInterface } from "node:readline";
import { runWorkflow } from "../../dist/index.js";

const [repoRoot, slug, mode = "free"] = process.argv.slice(2);
const STEPS = 6;
const say = (obj) => process.stdout.write(`${JSON.stringify(obj)}\n`);
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const next = async () => {
  for (let r = await lines.next(); !r.done; r = await lines.next()) if (r.value.trim() === "next") return;
  throw new Error("stdin ended before next");
};
const holdIn = mode.startsWith("in:") ? `s${mode.slice(3)}` : null;

try {
  const run = await runWorkflow({ repoRoot, target: slug, toolName: "controlled" }, async (ctx) => {
    let prev = "seed";
    for (let i = 0; i < STEPS; i++) {
      const id = `s${i}`;
      prev = await ctx.step(id, { i, prev }, async () => {
        say({ event: "ran", stepId: id });
        if (id === holdIn) {
          say({ event: "in", stepId: id });
          await next();
        }
        return `${prev}+${i}`;
      });
      if (mode === "between") {
        say({ event: "between", stepId: id });
        await next();
      }
    }
    return prev;
  });
  say({ event: "end", status: run.status, reason: run.reason ?? null, result: run.result ?? null, steps: run.steps ?? [] });
} catch (error) {
  say({ event: "rejected", code: error?.code, message: String(error?.message) });
}
process.exit(0);
