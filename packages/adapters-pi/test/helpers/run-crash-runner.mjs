// Child of run-workflow.crash.int.test.ts: runs (or resumes) an 8-step workflow through runWorkflow in
// <repoRoot>/ai_plan/<slug>. Each step appends "<stepId> <attempt> <inputHash> <pid>" to an O_APPEND effects log
// with fsync (the side effect), then returns an output derived from the previous one, so a wrongly reused or
// re-derived output changes the final result. Progress goes to stdout so the parent can kill at chosen moments.
import { createHash } from "node:crypto";
import { open } from "node:fs/promises";
import { runWorkflow } from "../../dist/index.js";

const [repoRoot, slug, effectsFile] = process.argv.slice(2);
const STEPS = 8;
const say = (line) => process.stdout.write(`${line}\n`);
const hash = (text) => createHash("sha256").update(text).digest("hex").slice(0, 16);

async function effect(line) {
  const h = await open(effectsFile, "a", 0o600);
  try {
    await h.write(`${line}\n`);
    await h.sync();
  } finally {
    await h.close();
  }
}

const run = await runWorkflow(
  { repoRoot, target: slug, toolName: "crash-test", maxAttempts: 1_000, reenter: true, lock: { staleMs: 2_000 }, onHookFailure: (f) => say(`hook-failure ${f.hook} ${f.error.code}`) },
  async (ctx) => {
    const outputs = [];
    let prev = "seed";
    for (let i = 0; i < STEPS; i++) {
      const id = `s${i}`;
      const input = { i, prev };
      say(`start ${id}`);
      prev = await ctx.step(id, input, async () => {
        const started = await ctx.checkpoints.record(id);
        await effect(`${id} ${started?.attempt ?? 0} ${hash(JSON.stringify(input))} ${process.pid}`);
        say(`effect ${id}`);
        return hash(`${prev}|${i}`);
      });
      say(`done ${id}`);
      outputs.push(prev);
    }
    return outputs;
  },
);
say(`steps ${JSON.stringify(run.status === "completed" ? run.steps : [])}`);
say(`result ${JSON.stringify(run.status === "completed" ? run.result : null)}`);
say(`status ${run.status}`);
