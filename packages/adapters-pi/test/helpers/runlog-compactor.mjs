// Child of run-log.readers.int.test.ts: holds a run log and, until its stdin closes, rewrites steps and the state
// and compacts after each (every compaction writes a snapshot and deletes the one before, and older segments).
// Steps `inline` (output in the log) and `artifact` (output in artifacts/) are written once and never change.
// Prints `ready` after its first compaction and `compactions <n>` at the end.
import { openRunLog } from "../../dist/store/run-log/run-log.js";

const [runDir] = process.argv.slice(2);
let stop = false;
process.stdin.on("end", () => (stop = true));
process.stdin.resume();
const pad = "v".repeat(300);
const log = await openRunLog({ runDir, inlineMax: 200, autoCompactAfter: 0 });
await log.step("inline", {}, () => ({ small: true }));
await log.step("artifact", {}, () => ({ pad }));
for (let i = 0; i < 18; i++) await log.step(`s${i}`, { i }, () => ({ i, pad }));
await log.putState({ n: 0, pad });
await log.compact();
process.stdout.write("ready\n");
let n = 0;
while (!stop) {
  n++;
  await log.step(`s${n % 18}`, { n }, () => ({ n, pad }));
  await log.putState({ n, pad });
  await log.compact();
}
await log.close();
process.stdout.write(`compactions ${n}\n`);
