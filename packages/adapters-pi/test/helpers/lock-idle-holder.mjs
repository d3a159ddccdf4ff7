// Child of plan-lock.dead-holder.int.test.ts: takes the plan lock with a long stale time (optionally
// pretending to run on another host), prints `held`, and keeps it until killed.
import { acquirePlanLock } from "../../dist/lock/plan-lock.js";

const [runDir, host] = process.argv.slice(2);
const r = await acquirePlanLock({ runDir, owner: { tool: "idle", ...(host ? { host } : {}) }, staleMs: 60_000 });
if (!r.ok) throw r.error;
process.stdout.write("held\n");
setInterval(() => undefined, 1_000);
