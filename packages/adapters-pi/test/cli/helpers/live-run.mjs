// Child of the CLI tests: runs <repoRoot>/ai_plan/<slug> with tool `live-bot`; step s0 completes, step s1 prints
// {"event":"in"} and then waits for "go" on stdin (a live run holding its lock mid-step; SIGKILL it for a crash).
import { createInterface } from "node:readline";
import { runWorkflow } from "../../../dist/index.js";

const [repoRoot, slug] = process.argv.slice(2);
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const run = await runWorkflow({ repoRoot, target: slug, toolName: "live-bot" }, async (ctx) => {
  await ctx.step("s0", { n: 0 }, () => "zero");
  return ctx.step("s1", { n: 1 }, async () => {
    process.stdout.write(`${JSON.stringify({ event: "in" })}\n`);
    for (let r = await lines.next(); !r.done; r = await lines.next()) if (r.value.trim() === "go") break;
    return "one";
  });
});
process.stdout.write(`${JSON.stringify({ event: "end", status: run.status })}\n`);
process.exit(0);
