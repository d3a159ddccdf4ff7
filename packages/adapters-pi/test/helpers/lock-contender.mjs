// Child of plan-lock.stale.int.test.ts. Reads commands on stdin:
//   `go <round>`      one attempt on the lock (no retries); prints `result <round> won|lost <code>`
//   `release <round>` the winner logs its exit and releases; prints `released <round> ok|<code>`
// Exits when stdin ends. The winner appends `enter <id> <round>` / `exit <id> <round>` to an O_APPEND log, so overlaps are visible.
import { appendFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { acquirePlanLock } from "../../dist/lock/plan-lock.js";

const [runDir, id, logFile] = process.argv.slice(2);
let held = null;
const say = (line) => process.stdout.write(`${line}\n`);
const rl = createInterface({ input: process.stdin });
rl.on("line", async (line) => {
  const [cmd, round] = line.split(" ");
  if (cmd === "go") {
    const r = await acquirePlanLock({ runDir, owner: { tool: `contender-${id}` }, staleMs: 5_000 });
    if (r.ok) {
      held = r.lock;
      appendFileSync(logFile, `enter ${id} ${round}\n`);
      say(`result ${round} won ${r.lock.tookOverFrom ? "took-over" : "fresh"}`);
    } else say(`result ${round} lost ${r.error.code}`);
  } else if (cmd === "release") {
    appendFileSync(logFile, `exit ${id} ${round}\n`);
    const out = await held.release();
    held = null;
    say(`released ${round} ${out.ok ? "ok" : out.error.code}`);
  }
});
say("ready");
