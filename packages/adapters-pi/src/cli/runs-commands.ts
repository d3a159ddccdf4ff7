/** `list`, `show` and `journal`: reading runs. */
import type { Command } from "commander";
import { isLive, migrateState, resolveActive, statusLine } from "@phasekit/core";
import type { JournalEntry as JournalEntryLike } from "../store/journal.js";
import { common } from "./context.js";
import { age, clip, duration, table } from "./format.js";
import { judgeLiveness } from "../lock/liveness.js";
import { CliFailure, EXIT, fail, JSON_SCHEMAS, plainMessage, printJson, usage, type CliIo } from "./io.js";
import { stepPayload } from "./history-view.js";
import { listRuns, locateRun, runDetail, runJournal, isFinal, type RunDetail, type RunSummary, type ShownStatus } from "./run-view.js";
import { loadDefinitionFolders } from "../definitions/folders.js";

const STATUSES = ["running", "paused", "completed", "cancelled", "failed", "crashed", "unreadable", "new"];

/** Registers the reading commands. */
export function registerRunCommands(program: Command, io: CliIo): void {
  program
    .command("list")
    .description("every run under the plan root: id, tool, status (crashed = its runner is gone), phase, step, age, lock holder")
    .option("--status <status>", `only runs with this status (${STATUSES.join(", ")})`)
    .option("--limit <n>", "at most this many runs (newest first)", positiveInt("--limit"))
    .action(async (o: { status?: string; limit?: number }, cmd: Command) => {
      const c = common(cmd, io);
      if (o.status !== undefined && !STATUSES.includes(o.status)) usage(`--status ${o.status} is not one of ${STATUSES.join(", ")}.`, { field: "status", value: o.status });
      let runs = await listRuns(c.roots, io.now().getTime());
      if (o.status !== undefined) runs = runs.filter((r) => r.status === o.status);
      if (o.limit !== undefined) runs = runs.slice(0, o.limit);
      if (c.json) return printJson(io, JSON_SCHEMAS.list, { runs });
      if (runs.length === 0) return void io.stderr.write("no runs\n");
      io.stdout.write(table(["ID", "STATUS", "TOOL", "PHASE", "STEP", "AGE", "LOCK"], runs.map(listRow)));
    });

  program
    .command("show")
    .description("one run: metadata, the workflow position, steps with attempts and durations, pending requests; --step: one step's input fingerprint and output")
    .argument("<run>", "run id, slug or path")
    .option("--step <id>", "show this step's payload: its record, its input (only the fingerprint is kept) and its output as pretty JSON")
    .action(async (target: string, o: { step?: string }, cmd: Command) => {
      const c = common(cmd, io);
      if (o.step !== undefined) return showStep(io, c.json, await locateRun(c.roots, target), o.step);
      const detail = await runDetail(c.roots, target, io.now().getTime());
      const position = positionOf(detail, c.defDirs);
      if (c.json) return printJson(io, JSON_SCHEMAS.show, { ...detail, position });
      io.stdout.write(showText(detail, position));
    });

  program
    .command("journal")
    .description("the run's event log, one line per event; --follow tails a live run until it ends")
    .argument("<run>", "run id, slug or path")
    .option("-f, --follow", "keep printing new events until the run ends (Ctrl-C to stop)")
    .option("--interval <ms>", "poll interval of --follow", positiveInt("--interval"), 250)
    .action(async (target: string, o: { follow?: boolean; interval: number }, cmd: Command) => {
      const c = common(cmd, io);
      const location = await locateRun(c.roots, target);
      let seen = 0;
      const print = (entries: readonly JournalEntryLike[]) => {
        for (const e of entries) {
          if (e.seq <= seen) continue;
          seen = e.seq;
          io.stdout.write(c.json ? `${JSON.stringify({ schema: JSON_SCHEMAS.journal, ...e })}\n` : `${journalLine(e)}\n`);
        }
      };
      print(await runJournal(location, c.roots));
      while (o.follow === true) {
        const detail = await runDetail(c.roots, location.runDir, io.now().getTime());
        print(await runJournal(location, c.roots));
        const unreadable = detail.summary.error;
        if (unreadable !== null) throw new CliFailure({ code: unreadable.code, message: `run ${location.slug} cannot be followed: ${plainMessage(unreadable.message)}` }, EXIT.failed);
        if (!stillGoing(detail.summary.status, (await judgeLiveness(location.runDir).catch(() => null))?.verdict === "live")) break;
        await new Promise((r) => setTimeout(r, o.interval));
      }
    });
}

/**
 * Whether `--follow` waits for more: a running run (its holder alive, or on another host and not settled yet),
 * or a finished or not yet started run whose holder is alive and may still write. A paused, crashed or
 * unreadable run, and a finished one whose lock a dead holder left behind, has nothing more coming.
 */
function stillGoing(status: ShownStatus, holderLive: boolean): boolean {
  return status === "running" || ((isFinal(status) || status === "new") && holderLive);
}

async function showStep(io: CliIo, json: boolean, location: { slug: string; runDir: string }, stepId: string): Promise<void> {
  const p = await stepPayload(location.runDir, stepId);
  if (p === null) fail("cli", "NOT_FOUND", `run ${location.slug} has no step ${JSON.stringify(stepId)}.`, { value: stepId, hint: `\`phasekit show ${location.slug}\` lists its steps` });
  if (json) {
    const output = p.output.ok ? { ok: true, bytes: p.output.bytes, value: JSON.parse(p.output.json) as unknown } : p.output;
    return printJson(io, JSON_SCHEMAS.step, { id: location.slug, stepId, record: p.record, input: p.input, output });
  }
  const r = p.record;
  const took = r.finishedAt === undefined ? "" : `, ${duration(Date.parse(r.finishedAt) - Date.parse(r.startedAt))}`;
  io.stdout.write(`step ${stepId} of run ${location.slug}: ${r.status} (attempt ${r.attempt}${took})\n`);
  io.stdout.write(`  input   not recorded, only its fingerprint ${p.input.fingerprint}\n`);
  if (!p.output.ok) return void io.stdout.write(`  output  none: ${p.output.message}\n`);
  io.stdout.write(`  output  ${p.output.bytes} bytes of JSON:\n${p.output.json}`);
}

function listRow(r: RunSummary): string[] {
  const lock = r.lockHolder === null ? "-" : `${r.lockStale ? "stale: " : ""}${r.lockHolder}`;
  return [r.id, r.status, r.ownerTool ?? "-", r.phase ?? "-", r.currentStep ?? r.lastStep ?? "-", r.ageMs === null ? "-" : age(r.ageMs), lock];
}

/** Where a run with a core state stands: its breadcrumb when the definitions are at hand, else its raw path. */
export interface Position {
  workflowKey: string;
  path: Array<{ workflowKey: string; phaseIndex: number }>;
  statusLine: string | null;
  /** Why the position could not be resolved against definitions, if it could not. */
  unresolved: string | null;
}

/** The run's core-state position (null for runs without a core state). */
export function positionOf(detail: RunDetail, defDirs: readonly string[]): Position | null {
  const raw = detail.metadata?.state;
  if (raw === undefined) return null;
  const migrated = migrateState(raw);
  if (!migrated.ok) return { workflowKey: "?", path: [], statusLine: null, unresolved: migrated.error.message };
  const state = migrated.state;
  const path = state.currentPath.map((s) => ({ workflowKey: s.workflowKey, phaseIndex: s.phaseIndex }));
  const base = { workflowKey: state.workflowKey, path };
  // A finished run has no current phase to resolve: its last path is all there is to show.
  if (!isLive(state)) return { ...base, statusLine: null, unresolved: null };
  if (defDirs.length === 0) return { ...base, statusLine: null, unresolved: "no definition folders (pass --defs DIR)" };
  const loaded = loadDefinitionFolders(defDirs);
  const active = resolveActive(loaded.registry, state);
  if (!active.ok) return { ...base, statusLine: null, unresolved: active.error.message };
  const line = active.active === null ? null : statusLine(active.active);
  return { ...base, statusLine: line?.ok === true ? line.text : null, unresolved: line?.ok === false ? line.error.message : null };
}

function showText(d: RunDetail, position: Position | null): string {
  const s = d.summary;
  const m = d.metadata;
  const lines = [`run ${s.id}  ${s.runDir}`];
  const kv = (k: string, v: string) => lines.push(`  ${k.padEnd(9)}${v}`);
  kv("status", `${s.status}${m?.failureReason ? ` (${m.failureReason})` : ""}`);
  if (s.error) kv("error", `${s.error.code}: ${s.error.message}`);
  kv("lock", s.lockHolder === null ? "free" : `${s.lockStale ? "stale, " : ""}held by ${s.lockHolder}`);
  if (m) {
    kv("tool", m.currentTool === m.ownerTool ? m.ownerTool : `${m.ownerTool} (now ${m.currentTool})`);
    kv("phase", m.phase ?? "-");
    kv("created", m.createdAt);
    kv("updated", `${m.updatedAt} (${age(s.ageMs ?? 0)} ago, generation ${m.generation})`);
    if (m.parentSlug) kv("parent", m.parentSlug);
  }
  if (position) {
    const where = position.path.map((p) => `${p.workflowKey}[${p.phaseIndex}]`).join(" > ");
    kv("workflow", position.statusLine ?? `${where}${position.unresolved ? `  (${position.unresolved})` : ""}`);
  }
  if (d.pending) kv("pending", `${d.pending.signal} requested at ${d.pending.requestedAt} by pid ${d.pending.requestedBy.pid}: ${d.pending.reason}`);
  if (d.steps.length === 0) lines.push("  steps    none yet");
  else {
    lines.push("  steps");
    const rows = d.steps.map((st) => [st.stepId, st.status, String(st.attempt), st.durationMs === null ? "-" : duration(st.durationMs), st.startedAt, st.error ?? ""]);
    lines.push(...table(["STEP", "STATUS", "ATTEMPT", "DURATION", "STARTED", "ERROR"], rows).trimEnd().split("\n").map((l) => `    ${l}`));
  }
  return `${lines.join("\n")}\n`;
}

/** One journal entry as a line: `#3  <time>  gen 2  metadata  status=running phase=build`. */
export function journalLine(e: JournalEntryLike): string {
  let what = "";
  const delta = e.event === "metadata-delta" ? topLevelSets(e.data) : undefined;
  if (delta !== undefined || (e.event === "metadata" && typeof e.data === "object" && e.data !== null)) {
    const d = delta ?? (e.data as Record<string, unknown>);
    what = ["status", "phase", "currentStepId", "lastCompletedStepId", "failureReason"]
      .filter((k) => d[k] !== undefined)
      .map((k) => `${k.replace("StepId", "")}=${String(d[k])}`)
      .join(" ");
  } else if (e.data !== undefined) {
    what = clip(JSON.stringify(e.data), 160);
  }
  return `#${e.seq}  ${e.at}  gen ${e.generation}  ${e.event}${what ? `  ${what}` : ""}`;
}

/** The top-level fields a metadata delta sets (`[[key], value]` ops), so its line reads like a snapshot's. */
function topLevelSets(data: unknown): Record<string, unknown> | undefined {
  const ops = (data as { ops?: unknown } | null)?.ops;
  if (!Array.isArray(ops)) return undefined;
  const out: Record<string, unknown> = {};
  for (const op of ops) if (Array.isArray(op) && op.length === 2 && Array.isArray(op[0]) && op[0].length === 1) out[String(op[0][0])] = op[1];
  return out;
}

/** Commander parser for the positive integer option `flag` (a bad value is bad usage, exit 2). */
export function positiveInt(flag: string): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < 1) usage(`${flag} ${JSON.stringify(value)} is not a positive integer.`, { field: flag.replace(/^--/, ""), value });
    return n;
  };
}
