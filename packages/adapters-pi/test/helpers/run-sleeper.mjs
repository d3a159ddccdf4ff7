// Child of run-workflow.lost-lock.int.test.ts: runs a 4-step workflow in <repoRoot>/ai_plan/<slug> with a 2 s
// stale time. Mode `between` waits for `go` on stdin after step s0; mode `in` waits inside step s1's function;
// `free` never waits. Step s1's output names the process, so the test can tell whose checkpoint survived.
// Reports JSON lines: between / in, aborted (ctx.signal), hook-failure, end, rejected.
import { createInterface } from "node:readline";
import { runWorkflow } from "../../dist/index.js";

const [repoRoot, slug, mode = "free"] = process.argv.slice(2);
const say = (obj) => process.stdout.write(`${JSON.stringify(obj)}\n`);
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const go = async () => {
  for (let r = await lines.next(); !r.done; r = await lines.next()) if (r.value.trim() === "go") return;
  throw new Error("stdin ended before go");
};

try {
  const run = await runWorkflow(
    { repoRoot, target: slug, toolName: "sleeper-test", lock: { staleMs: 2_000 }, onHookFailure: (f) => say({ event: "hook-failure", hook: f.hook, code: f.error.cause?.code ?? f.error.code }) },
    async (ctx) => {
      ctx.signal.addEventListener("abort", () => say({ event: "aborted", code: ctx.signal.reason?.code }));
      let prev = "seed";
      for (let i = 0; i < 4; i++) {
        const id = `s${i}`;
        prev = await ctx.step(id, { i, prev }, async () => {
          if (id === "s1" && mode === "in") {
            say({ event: "in", stepId: id });
            await go();
          }
          return id === "s1" ? `${prev}+${i}@${process.pid}` : `${prev}+${i}`;
        });
        if (id === "s0" && mode === "between") {
          say({ event: "between", stepId: id });
          await go();
        }
      }
      return prev;
    },
  );
  say({ event: "end", status: run.status, result: run.result ?? null });
} catch (error) {
  say({ event: "rejected", code: error?.code, message: String(error?.message) });
}
process.exit(0);
