// Child of run-workflow.concurrency.int.test.ts: prints `ready`, waits for `go` on stdin, then starts the run
// <repoRoot>/ai_plan/<slug>. Inside the body it prints `body` and holds the run until `finish` arrives, so the
// other racer meets a held lock. Reports as JSON lines: body, end (status), or rejected (code, holder).
import { createInterface } from "node:readline";
import { runWorkflow } from "../../dist/index.js";

const [repoRoot, slug] = process.argv.slice(2);
const say = (obj) => process.stdout.write(`${JSON.stringify(obj)}\n`);
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const waitFor = async (word) => {
  for (let r = await lines.next(); !r.done; r = await lines.next()) if (r.value.trim() === word) return;
  throw new Error(`stdin ended before ${word}`);
};

say({ event: "ready", pid: process.pid });
await waitFor("go");
try {
  const run = await runWorkflow(
    { repoRoot, target: slug, toolName: "racer", onLockHeld: (error) => say({ event: "lock-held", code: error.code }) },
    async (ctx) => {
      say({ event: "body", pid: process.pid, resumed: ctx.resumed });
      await waitFor("finish");
      return ctx.step("only", { slug }, () => ({ by: process.pid }));
    },
  );
  say({ event: "end", status: run.status });
} catch (error) {
  say({ event: "rejected", code: error?.code, holder: error?.details?.value ?? null, message: String(error?.message) });
}
process.exit(0);
