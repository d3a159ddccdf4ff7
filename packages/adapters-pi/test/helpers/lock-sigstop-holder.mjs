// Child of plan-lock.sigstop.int.test.ts: takes the lock, reads workflow.json's generation, prints `ready`,
// then (after being stopped and continued by the test) waits for `go` on stdin and reports, as JSON lines,
// what it was told: the LOCK_LOST abort, assertHeld, the refused compare-and-set write, and the release.
import { createInterface } from "node:readline";
import path from "node:path";
import { acquirePlanLock } from "../../dist/lock/plan-lock.js";
import { readWorkflowMetadata, writeWorkflowMetadata } from "../../dist/store/metadata.js";

const [runDir] = process.argv.slice(2);
const file = path.join(runDir, "workflow.json");
const say = (obj) => process.stdout.write(`${JSON.stringify(obj)}\n`);

const r = await acquirePlanLock({ runDir, owner: { tool: "sleeper" }, staleMs: 2_000, updateMs: 1_000 });
if (!r.ok) throw r.error;
const lock = r.lock;
lock.signal.addEventListener("abort", () => say({ event: "aborted", code: lock.signal.reason?.code, message: lock.signal.reason?.message }));
const read = await readWorkflowMetadata(file);
if (!read.ok || read.metadata === null) throw new Error("no workflow.json");
const metadata = read.metadata;
say({ event: "ready", generation: metadata.generation });

const rl = createInterface({ input: process.stdin });
rl.once("line", async () => {
  let held;
  try {
    await lock.assertHeld();
    held = "held";
  } catch (e) {
    held = e.code;
  }
  say({ event: "assertHeld", result: held });
  const { schemaVersion, generation, ...rest } = metadata;
  const w = await writeWorkflowMetadata(file, { ...rest, phase: "written-by-sleeper" }, { expectedGeneration: generation });
  say({ event: "write", result: w.ok ? "written" : w.error.code });
  const rel = await lock.release();
  say({ event: "release", result: rel.ok ? "released" : rel.error.code });
  rl.close();
  say({ event: "exit" });
});
