// Child of open-name.mount.test.ts, started in its own user and mount namespaces (`unshare -rm`): opens a run log
// in <root>/plans/run, writes step `a`, bind-mounts an empty folder over <root>/<target> (`plans/run/runlog`,
// `plans/run` or `plans`), then tries step `b`. Prints `ok b` or `error <code>`, then `ran <body ran?>`.
import { execFileSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import path from "node:path";
import { openRunLog } from "../../dist/store/run-log/run-log.js";

const [root, target] = process.argv.slice(2);
const runDir = path.join(root, "plans", "run");
mkdirSync(runDir, { recursive: true });
const empty = path.join(root, "empty");
mkdirSync(empty);
const log = await openRunLog({ runDir, inlineMax: 4096 });
await log.step("a", {}, () => ({ v: "a" }));
execFileSync("mount", ["--bind", empty, path.join(root, target)]);
let ran = false;
try {
  await log.step("b", {}, () => ((ran = true), { v: "b" }));
  process.stdout.write("ok b\n");
} catch (error) {
  process.stdout.write(`error ${error?.code ?? String(error)}\n`);
}
process.stdout.write(`ran ${ran}\n`);
await log.close();
