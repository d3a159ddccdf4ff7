// Child of checkpoint-store.crash.int.test.ts: runs steps s0, s1, … as fast as it can (each with a ~4 KB output
// so appends and artifact writes take real time) and prints `ok <i>` once step i is acknowledged.
import { createCheckpointStore } from "../../dist/store/checkpoints.js";

const [runDir, autoCompactAfter] = process.argv.slice(2);
const store = createCheckpointStore({ runDir, now: () => new Date(), autoCompactAfter: Number(autoCompactAfter) });
const pad = "x".repeat(4096);
process.stdout.write("ready\n");
for (let i = 0; ; i++) {
  // Every fifth step reruns an earlier id with a new input, so compaction has superseded records to drop.
  const id = i % 5 === 4 ? `s${i - 4}` : `s${i}`;
  await store.step(id, { i }, () => ({ i, pad }));
  process.stdout.write(`ok ${i}\n`);
}
