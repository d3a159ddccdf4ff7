// Child of run-log.body-fence.int.test.ts: takes the plan lock of a run folder (waiting, with retries, until the
// holder's heartbeat has stood still past the stale time), then writes `flagFile` and holds the lock without
// claiming the run log: the moment between a newcomer's lock acquisition and its claim. Releases when stdin ends.
import { writeFileSync } from "node:fs";
import { acquirePlanLock } from "../../dist/lock/plan-lock.js";

const [runDir, flagFile] = process.argv.slice(2);
const r = await acquirePlanLock({ runDir, owner: { tool: "taker" }, staleMs: 2_000, retries: 10_000 });
if (!r.ok) {
  process.stderr.write(`${r.error.code}: ${r.error.message}\n`);
  process.exit(2);
}
writeFileSync(flagFile, r.lock.tookOverFrom === null ? "fresh" : "took-over");
process.stdout.write("taken\n");
process.stdin.resume();
process.stdin.on("end", async () => {
  await r.lock.release();
  process.exit(0);
});
