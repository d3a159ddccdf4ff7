// Child of recover-runs.int.test.ts: starts run <slug> in <repoRoot> as [tool] (default "recover-test"), completes step "a",
// prints "ready" and then waits forever (the parent SIGKILLs it to leave a crashed run, or keeps it as a live holder).
import { runWorkflow } from "../../dist/index.js";

const [repoRoot, slug, toolName = "recover-test"] = process.argv.slice(2);
await runWorkflow({ repoRoot, target: slug, toolName }, async (ctx) => {
  await ctx.step("a", {}, () => ({ by: process.pid }));
  process.stdout.write("ready\n");
  // A pending promise alone would let Node exit (the lock's timers are unref'd): keep the process alive.
  await new Promise(() => setInterval(() => {}, 60_000));
});
