// Child of run-log.displaced.int.test.ts: claims the run log, then does one step with an artifact output, one
// inline step, a state, a compaction and a final event, counting every file-system boundary the log reports.
// At boundary <stopAt> it prints `stopped <n> <name>` and SIGSTOPs itself (the parent lets a new holder finish,
// then SIGCONTs it). It ends printing `end ok` or `end error <code>`; with stopAt 0 it prints `boundaries <n>`.
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
  await log.step("x", { k: "x" }, () => ({ by: "old", pad: "o".repeat(400) }));
  await log.step("y", { k: "y" }, () => ({ by: "old" }));
  await log.putState({ by: "old", n: 1 });
  await log.compact();
  await log.event("end", { by: "old" });
  armed = false;
  process.stdout.write(`boundaries ${n}\n`);
  process.stdout.write("end ok\n");
} catch (error) {
  process.stdout.write(`end error ${error?.code ?? String(error)}\n`);
}
