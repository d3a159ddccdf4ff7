// Child of plan-lock.counter.int.test.ts: `iterations` increments of <runDir>/counter under the plan lock.
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { acquirePlanLock } from "../../dist/lock/plan-lock.js";

const [runDir, iterations] = process.argv.slice(2);
const counter = path.join(runDir, "counter");
for (let i = 0; i < Number(iterations); i++) {
  const r = await acquirePlanLock({ runDir, owner: { tool: "counter" }, retries: 100_000, staleMs: 10_000 });
  if (!r.ok) throw r.error;
  const n = Number(readFileSync(counter, "utf8"));
  writeFileSync(counter, String(n + 1));
  const out = await r.lock.release();
  if (!out.ok) throw out.error;
}
process.stdout.write("done\n");
