/**
 * `phasekit resume-due`: the runs whose durable wait has ended while no process ran them (a `ctx.sleep` whose time
 * has come, a `ctx.waitForApproval` whose timeout passed or whose decision was filed), read from each run's history
 * (the wait's start entry records when it is due). phasekit cannot run a body itself (it is the caller's code), so
 * it lists them, and with `--exec <command>` runs the command once per due run (PHASEKIT_RUN_ID in its
 * environment), e.g. the script that calls `runWorkflow` for that run. Runs held by a live process (a live lock,
 * or with `--store` a live lease) are skipped.
 */
import { spawnSync } from "node:child_process";
import type { Command } from "commander";
import { parseWaitKey, waitKey, waitLabel } from "../engine/wait-keys.js";
import { common } from "./context.js";
import { readRunLog } from "../store/run-log/reader.js";
import { CliFailure, EXIT, printFailure, printJson, type CliIo } from "./io.js";
import { listRuns, locateRun, withRunStore, type Roots } from "./run-view.js";

/** One wait that has ended. */
export interface DueWait {
  id: string;
  wait: string;
  /** ISO time it became due; null when a filed decision ends it. */
  dueAt: string | null;
  why: string;
}

type WaitEntry = { key: string; completed: boolean; output: unknown };
const isWaitKey = (key: string): boolean => parseWaitKey(key) !== null;

/**
 * The wait entries of a run's history (phasekit's own, which the views shown to people leave out), with their
 * outputs: from the run log of a plan folder, or through the store (`--store`: its records, phasekit's own
 * included, each output read back).
 */
async function waitEntries(roots: Roots, run: { id: string; runDir: string }): Promise<WaitEntry[]> {
  if (roots.store === undefined) return folderWaitEntries(run.runDir);
  return withRunStore(roots, await locateRun(roots, run.id), async (store) => {
    const out: WaitEntry[] = [];
    for (const r of await (await store.checkpoints(run.id, { now: () => new Date() })).records()) {
      if (!isWaitKey(r.stepId)) continue;
      const text = r.status === "completed" ? await store.readStepOutput?.(run.id, r) : undefined;
      out.push({ key: r.stepId, completed: r.status === "completed", output: text?.ok ? (JSON.parse(text.text) as unknown) : undefined });
    }
    return out;
  });
}

async function folderWaitEntries(runDir: string): Promise<WaitEntry[]> {
  const view = await readRunLog(runDir);
  if (view === null) return [];
  try {
    const out: WaitEntry[] = [];
    for (const e of view.entries()) {
      if (!isWaitKey(e.key)) continue;
      const text = e.status === "completed" ? await view.outputText(e) : undefined;
      out.push({ key: e.key, completed: e.status === "completed", output: text === undefined ? undefined : (JSON.parse(text) as unknown) });
    }
    return out;
  } finally {
    view.close();
  }
}

/** Whether a person's decision waits in the run's store (`phasekit approve`). */
async function decisionFiled(roots: Roots, id: string): Promise<boolean> {
  const location = await locateRun(roots, id);
  const r = await withRunStore(roots, location, (store) => store.readControl(location.slug, "approve"));
  return r.ok && r.request !== null;
}

/** The ended waits of every run (in a plan folder, or in the store) that no live process holds, oldest due first. */
export async function dueWaits(roots: Roots, nowMs: number): Promise<DueWait[]> {
  const out: DueWait[] = [];
  for (const run of await listRuns(roots, nowMs)) {
    if (run.status !== "crashed" && run.status !== "running") continue;
    if (run.status === "running" && run.lockHolder !== null && !run.lockStale) continue; // a live process has it
    const entries = await waitEntries(roots, run);
    const done = new Set(entries.filter((e) => e.completed).map((e) => e.key));
    for (const entry of entries) {
      const start = parseWaitKey(entry.key);
      if (start?.role !== "start" || !entry.completed) continue;
      if (done.has(waitKey({ ...start, role: "end" }))) continue;
      const kind = start.kind;
      // A resumed body that asked another length recorded the wait's due time again (waits.ts): the latest counts.
      const again = entries.find((e) => e.completed && e.key === waitKey({ ...start, role: "due" }));
      const recorded = ((again ?? entry).output ?? {}) as { dueAt?: number | null };
      const dueAt = typeof recorded.dueAt === "number" ? recorded.dueAt : null;
      const wait = waitLabel(start);
      const decided = kind === "approval" && (await decisionFiled(roots, run.id));
      if (decided) out.push({ id: run.id, wait, dueAt: null, why: "a decision was filed" });
      else if (dueAt !== null && dueAt <= nowMs) out.push({ id: run.id, wait, dueAt: new Date(dueAt).toISOString(), why: kind === "sleep" ? "its sleep is over" : "its timeout passed" });
      else if (recorded.dueAt === undefined && kind === "sleep") out.push({ id: run.id, wait, dueAt: null, why: "its deadline was not recorded (an older run): a resume sleeps only what is left" });
    }
  }
  return out.sort((a, b) => (a.dueAt ?? "").localeCompare(b.dueAt ?? ""));
}

/** One command `--exec` ran: how it ended (`exitCode` null when a signal ended it or it could not start). */
type Ran = DueWait & { exitCode: number | null; signal: string | null; error?: string };

/** Why a command `--exec` ran failed, in words; null when it exited 0. */
function failure(r: Ran): string | null {
  if (r.error !== undefined) return `could not start (${r.error})`;
  if (r.signal !== null) return `was killed by ${r.signal}`;
  return r.exitCode === 0 ? null : `exited ${String(r.exitCode)}`;
}

/** Registers `resume-due`; `setExit` makes it end with exit 1 when a command it ran failed (it still runs the rest). */
export function registerResumeDueCommand(program: Command, io: CliIo, setExit: (code: number) => void): void {
  program
    .command("resume-due")
    .description("runs whose sleep or approval wait has ended while no process ran them; --exec runs a command per run (PHASEKIT_RUN_ID set; exit 1 if one fails)")
    .option("--exec <command>", "a shell command to run once per due run, e.g. the script that resumes it with runWorkflow")
    .action(async (o: { exec?: string }, cmd: Command) => {
      const c = common(cmd, io);
      const due = await dueWaits(c.roots, io.now().getTime());
      const ran: Ran[] = [];
      for (const d of o.exec === undefined ? [] : due) {
        const r = spawnSync(o.exec as string, { shell: true, cwd: c.roots.repoRoot, env: { ...process.env, PHASEKIT_RUN_ID: d.id }, stdio: ["ignore", "inherit", "inherit"] });
        ran.push({ ...d, exitCode: r.status, signal: r.signal, ...(r.error === undefined ? {} : { error: r.error.message }) });
      }
      if (c.json) printJson(io, "phasekit.resume-due/1", { due, ...(o.exec === undefined ? {} : { ran }) });
      else if (due.length === 0) io.stdout.write("no run has a wait that has ended\n");
      else {
        for (const d of due) io.stdout.write(`${d.id}  ${d.wait}  ${d.why}${d.dueAt === null ? "" : ` (due ${d.dueAt})`}\n`);
        for (const r of ran) io.stdout.write(`${r.id}: ${o.exec} ${failure(r) ?? "exited 0"}\n`);
      }
      // A cron job or a timer must see that a run was not resumed: exit 1, naming each run whose command failed.
      const failed = ran.flatMap((r) => {
        const why = failure(r);
        return why === null ? [] : [{ id: r.id, wait: r.wait, why }];
      });
      if (failed.length === 0) return;
      const message = `resume-due: the command failed for ${failed.map((f) => `run ${f.id} (${f.wait}: ${f.why})`).join(", ")}; the other due runs' commands ran`;
      printFailure(io, new CliFailure({ code: "EXEC_FAILED", message, details: { command: o.exec, failed } }, EXIT.failed), c.json);
      setExit(EXIT.failed);
    });
}
