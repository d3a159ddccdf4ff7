// Child of run-workflow.ended-requests.int.test.ts: runs the 3-step workflow s0..s2 in <repoRoot>/ai_plan/<slug>.
// Mode `fail`: inside s1 it reports `in`, waits for `next` on stdin, then throws (the run ends failed). Mode
// `free`: every step completes. Reports JSON lines: in, end, rejected.
import { createInterface } from "node:readline";
import { runWorkflow } from "../../dist/index.js";

const [repoRoot, slug, mode = "free"] = process.argv.slice(2);
const say = (obj) => process.stdout.write(`${JSON.stringify(obj)}\n`);
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const next = async () => {
  for (let r = await lines.next(); !r.done; r = await lines.next()) if (r.value.trim() === "next") return;
  throw new Error("stdin ended before next");
};

try {
  const run = await runWorkflow({ repoRoot, target: slug, toolName: "ends" }, async (ctx) => {
    for (const id of ["s0", "s1", "s2"]) {
      await ctx.step(id, { id }, async () => {
        if (id === "s1" && mode === "fail") {
          say({ event: "in", stepId: id });
          await next();
          throw new Error("s1 broke");
        }
        return id;
      });
    }
    return "done";
  });
  say({ event: "end", status: run.status, reason: run.reason ?? null });
} catch (error) {
  say({ event: "rejected", code: error?.code ?? null, message: String(error?.message) });
}
process.exit(0);
