// Child of time-travel.*.int.test.ts: runs (or resumes, re-entering a finished run) a 5-step workflow through
// runWorkflow in <repoRoot>/ai_plan/<slug>. Each step appends "<stepId> <pid>" to an fsynced effects log (the
// side effect) and returns an output derived from the previous one, so a wrong reuse changes the result. With a
// 4th argument "fail:<step>", that step throws (the run ends failed there).
import { open } from "node:fs/promises";
import { runWorkflow } from "../../dist/index.js";

const [repoRoot, slug, effectsFile, mode = ""] = process.argv.slice(2);
const say = (line) => process.stdout.write(`${line}\n`);

async function effect(line) {
  const h = await open(effectsFile, "a", 0o600);
  try {
    await h.write(`${line}\n`);
    await h.sync();
  } finally {
    await h.close();
  }
}

const run = await runWorkflow({ repoRoot, target: slug, toolName: "time-travel-test", reenter: true, maxAttempts: 100 }, async (ctx) => {
  let prev = "seed";
  for (const id of ["a", "b", "c", "d", "e"]) {
    prev = await ctx.step(id, { prev }, async () => {
      await effect(`${id} ${process.pid}`);
      if (mode === `fail:${id}`) throw new Error(`${id} failed on purpose`);
      return `${prev}>${id}`;
    });
    say(`done ${id}`);
  }
  return prev;
}).catch((error) => ({ status: "failed", error }));
say(`status ${run.status}`);
say(`result ${JSON.stringify(run.status === "completed" ? run.result : null)}`);
say(`steps ${JSON.stringify(run.steps ?? [])}`);
