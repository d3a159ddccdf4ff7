// Child of run-log.room-failure.test.ts, started under a small `ulimit -f`. Mode `log`: opens a run log in
// <dir> and writes <steps> steps with small outputs, printing `ok <key>` per acknowledged step, then `closed`.
// Mode `workflow`: runWorkflow in the repository <dir> with <steps> such steps, printing `status <status>`.
// Any error: `error <code> <message>`.
import { openRunLog } from "../../dist/store/run-log/run-log.js";
import { runWorkflow } from "../../dist/index.js";

// Node resets inherited signal dispositions at start-up: without this, SIGXFSZ kills the process instead of EFBIG.
process.on("SIGXFSZ", () => {});
const [mode, dir, stepsText] = process.argv.slice(2);
const steps = Number(stepsText);
const outputOf = (i) => ({ i, pad: "p".repeat(200) });
try {
  if (mode === "workflow") {
    const run = await runWorkflow({ repoRoot: dir, target: "limited", toolName: "fsize" }, async (ctx) => {
      for (let i = 0; i < steps; i++) await ctx.step(`s${i}`, { i }, () => outputOf(i));
    });
    process.stdout.write(`status ${run.status}\n`);
  } else {
    const log = await openRunLog({ runDir: dir, inlineMax: 4096 });
    for (let i = 0; i < steps; i++) {
      await log.step(`s${i}`, { i }, () => outputOf(i));
      process.stdout.write(`ok s${i}\n`);
    }
    await log.close();
    process.stdout.write("closed\n");
  }
} catch (error) {
  process.stdout.write(`error ${error?.code ?? String(error)} ${String(error?.message).split("\n")[0]}\n`);
}
