// Child of run-workflow.dispatch-crash.int.test.ts: walks the release workflow (a step, then a dispatch, each
// phase; one loop of a sub-workflow) through runWorkflow, and SIGKILLs itself at one file-system call made while
// dispatch number KILL_DISPATCH is in flight: just before the call (KILL_MODE=before) or just after it returned
// (after). Every fs entry point (promises, FileHandle, sync) is counted, whatever layer makes the call.
// argv: repoRoot slug effectsFile definitionsJson; prints "fs-calls <dispatch> <n>" for each dispatch it finished.
import fs from "node:fs";
import { syncBuiltinESMExports } from "node:module";

const [repoRoot, slug, effectsFile, definitionsJson] = process.argv.slice(2);
const KILL_DISPATCH = Number(process.env.KILL_DISPATCH ?? 0);
const KILL_AT = Number(process.env.KILL_AT ?? 0);
const KILL_MODE = process.env.KILL_MODE ?? "before";
const say = (line) => fs.writeSync(1, `${line}\n`);

let dispatching = 0;
let calls = 0;
const die = () => process.kill(process.pid, "SIGKILL");
const counted = (fn) =>
  function (...args) {
    if (dispatching === 0) return fn.apply(this, args);
    const n = ++calls;
    if (dispatching === KILL_DISPATCH && n === KILL_AT && KILL_MODE === "before") die();
    const r = fn.apply(this, args);
    if (dispatching === KILL_DISPATCH && n === KILL_AT && KILL_MODE === "after") {
      if (r && typeof r.then === "function") return r.then((v) => (die(), v));
      die();
    }
    return r;
  };
const P = ["open", "rename", "writeFile", "appendFile", "mkdir", "unlink", "rm", "rmdir", "truncate", "link", "copyFile"];
for (const name of P) if (typeof fs.promises[name] === "function") fs.promises[name] = counted(fs.promises[name]);
const S = ["openSync", "writeSync", "fsyncSync", "fdatasyncSync", "renameSync", "closeSync", "writeFileSync", "unlinkSync", "mkdirSync", "ftruncateSync", "linkSync"];
for (const name of S) if (typeof fs[name] === "function") fs[name] = counted(fs[name]);
const probe = await fs.promises.open(process.execPath, "r");
const FileHandle = Object.getPrototypeOf(probe);
await probe.close();
for (const name of ["write", "writev", "writeFile", "appendFile", "sync", "datasync", "truncate", "close"]) {
  if (typeof FileHandle[name] === "function") FileHandle[name] = counted(FileHandle[name]);
}
syncBuiltinESMExports();

const { compileDefinitions } = await import("../../../core/dist/index.js");
const { runWorkflow } = await import("../../dist/index.js");
const compiled = compileDefinitions(JSON.parse(definitionsJson));
if (!compiled.ok) throw new Error("definitions do not compile");

const WALK = JSON.parse(process.env.WALK);
const effect = (line) => {
  const fd = fs.openSync(effectsFile, "a", 0o600);
  try {
    fs.writeSync(fd, `${line}\n`);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
};

const result = await runWorkflow(
  { repoRoot, target: slug, toolName: "dispatch-crash", lock: { staleMs: 2_000 }, workflow: { registry: compiled.registry, workflowKey: "release", taskDescription: "ship" } },
  async (ctx) => {
    const seen = [];
    let d = 0;
    for (const op of WALK) {
      const core = ctx.workflow.state();
      const here = `${core.status}:${core.currentPath.map((s) => `${s.workflowKey}/${s.phaseIndex}`).join(">")}|${ctx.metadata().phase ?? "-"}`;
      if (op.step !== undefined) {
        seen.push(`${op.step}@${here}`);
        await ctx.step(op.step, { phase: ctx.metadata().phase ?? null }, () => {
          effect(op.step);
          return `${op.step} done`;
        });
      } else {
        d++;
        calls = 0;
        dispatching = d;
        const r = await ctx.workflow.dispatch({ type: op.dispatch });
        dispatching = 0;
        say(`fs-calls ${d} ${calls}`);
        seen.push(`${op.dispatch}@${here}->${r.ok ? r.happened.type : r.error.code}`);
      }
    }
    return seen;
  },
);
say(`result ${JSON.stringify({ status: result.status, seen: result.result, state: result.metadata?.state?.status })}`);
