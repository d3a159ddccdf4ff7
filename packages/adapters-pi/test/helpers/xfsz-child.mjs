// Child of signal-dispositions.int.test.ts, started with SIGXFSZ ignored and a small `ulimit -f`. Imports the
// package, optionally takes and releases a plan lock (which loads proper-lockfile), then writes past the limit:
// with the inherited disposition kept, the write fails with EFBIG instead of the process dying of SIGXFSZ.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
const pkg = await import("../../dist/plan-folder.js");
const dir = mkdtempSync(path.join(tmpdir(), "pk-xfsz-"));
const mode = process.argv[2];
let lock;
if (mode === "lock" || mode === "held") {
  const r = await pkg.acquirePlanLock({ runDir: dir, owner: { tool: "xfsz" } });
  if (!r.ok) throw r.error;
  lock = r.lock;
  if (mode === "lock") await lock.release();
}
try {
  writeFileSync(path.join(dir, "big"), Buffer.alloc(200_000));
  process.stdout.write("no error\n");
} catch (error) {
  process.stdout.write(`${error.code}\n`);
}
if (lock && mode === "held") await lock.release();
