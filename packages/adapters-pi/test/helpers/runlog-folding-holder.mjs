// Child of run-log.fold-displaced.int.test.ts: claims a run log whose history already has four segments, does one
// step, and closes, which folds the history (compaction, the next epoch's head, the deletions; fold.ts). It
// counts every file-system boundary after the claim; at boundary <stopAt> it prints `stopped <n> <name>` and
// SIGSTOPs itself (the parent lets a new holder work, or SIGKILLs it there). `acknowledged` follows the step. It ends printing `end ok` (close is best effort) or `end error <code>`; with stopAt 0 it
// prints `boundaries <n>` first.
import { openRunLog } from "../../dist/store/run-log/run-log.js";

const [runDir, stopAtText] = process.argv.slice(2);
const stopAt = Number(stopAtText);
let armed = false;
let n = 0;
const beforeFsCall = (name) => {
  if (!armed) return;
  n++;
  if (n === stopAt) {
    process.stdout.write(`stopped ${n} ${name}\n`);
    process.kill(process.pid, "SIGSTOP");
  }
};
try {
  const log = await openRunLog({ runDir, inlineMax: 200, beforeFsCall });
  process.stdout.write(`epoch ${log.epoch}\n`);
  armed = true;
  await log.step("old", { k: "old" }, () => ({ by: "old", pad: "o".repeat(400) }));
  process.stdout.write("acknowledged\n");
  await log.close();
  armed = false;
  if (stopAt === 0) process.stdout.write(`boundaries ${n}\n`);
  process.stdout.write("end ok\n");
} catch (error) {
  process.stdout.write(`end error ${error?.code ?? String(error)}\n`);
}
