// Child of the run-log room tests (run-log.room-*.test.ts): claims the run log in <runDir> (a newer epoch than
// the parent's holder, frozen inside a write or before its cut at close), acknowledges one step and closes;
// prints `ok <epoch>` or `error <code>`.
import { openRunLog } from "../../dist/store/run-log/run-log.js";

const [runDir] = process.argv.slice(2);
try {
  const log = await openRunLog({ runDir, inlineMax: 4096 });
  await log.step("x", {}, () => ({ by: "newer" }));
  await log.close();
  process.stdout.write(`ok ${log.epoch}\n`);
} catch (error) {
  process.stdout.write(`error ${error?.code ?? String(error)}\n`);
}
