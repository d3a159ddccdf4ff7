/** `list`, `show` and `journal`: reading runs. */
import type { Command } from "commander";
import { isLive, migrateState, resolveActive, statusLine, type WorkflowRegistry } from "@phasekit/core";
import type { JournalEntry as JournalEntryLike } from "../store/journal.js";
import { common } from "./context.js";
import { age, duration, table } from "./format.js";
import { journalLine, journalSentences, type SentenceCarry } from "./journal-text.js";
import type { RunLocation } from "../run/target.js";
import { CliFailure, EXIT, fail, JSON_SCHEMAS, plainMessage, printJson, usage, type CliIo } from "./io.js";
import { stepPayload } from "./history-view.js";
import { listRuns, locateRun, runDetail, runJournal, followVerdict, withRunRead, type Roots, type RunDetail, type RunSummary } from "./run-view.js";
import { loadDefinitionFolders } from "../definitions/folders.js";
import { readPinIn } from "../run/definitions-pin.js";
import { budgetLine, budgetView, type BudgetView } from "./budget-view.js";
import { definitionsLines, definitionsView, storePin, type DefinitionsView } from "./definitions-view.js";
import { storeAt } from "./store-runs.js";

const STATUSES = ["running", "paused", "completed", "cancelled", "failed", "crashed", "unreadable", "new"];

/** Registers the reading commands. */
export function registerRunCommands(program: Command, io: CliIo): void {
  program
    .command("list")
    .description("every run under the plan root: id, tool, status (crashed = its runner is gone), phase, step, age, lock holder")
    .option("--status <status>", `only runs with this status (${STATUSES.join(", ")})`)
    .option("--limit <n>", "at most this many runs (newest first)", positiveInt("--limit"))
    .option("--fields <names>", `only these fields, comma-separated, as columns and JSON keys (${LIST_FIELDS.join(", ")})`, fieldList)
    .action(async (o: { status?: string; limit?: number; fields?: string[] }, cmd: Command) => {
      const c = common(cmd, io);
      const fields = checkFields(o.fields, LIST_FIELDS);
      if (o.status !== undefined && !STATUSES.includes(o.status)) usage(`--status ${o.status} is not one of ${STATUSES.join(", ")}.`, { field: "status", value: o.status });
      let runs = await listRuns(c.roots, io.now().getTime());
      if (o.status !== undefined) runs = runs.filter((r) => r.status === o.status);
      if (o.limit !== undefined) runs = runs.slice(0, o.limit);
      if (c.json) return printJson(io, JSON_SCHEMAS.list, { runs: fields === undefined ? runs : runs.map((r) => pick(r, fields)) });
      if (runs.length === 0) return void io.stderr.write("no runs\n");
      if (fields !== undefined) return void io.stdout.write(table(fields.map(columnName), runs.map((r) => fields.map((f) => cell(r[f])))));
      io.stdout.write(table(["ID", "STATUS", "TOOL", "PHASE", "STEP", "AGE", "LOCK"], runs.map(listRow)));
    });

  program
    .command("show")
    .description("one run: metadata, the workflow position, steps with attempts and durations, pending requests; --step: one step's input fingerprint and output")
    .argument("<run>", "run id, slug or path")
    .option("--step <id>", "show this step's payload: its record, its input (only the fingerprint is kept) and its output as pretty JSON")
    .option("--fields <names>", `only these parts of the phasekit.show/1 document, comma-separated (${SHOW_FIELDS.join(", ")}); printed as JSON`, fieldList)
    .action(async (target: string, o: { step?: string; fields?: string[] }, cmd: Command) => {
      const c = common(cmd, io);
      const fields = checkFields(o.fields, SHOW_FIELDS);
      if (o.step !== undefined) return showStep(io, c.json, c.roots, await locateRun(c.roots, target), o.step);
      const detail = await runDetail(c.roots, target, io.now().getTime());
      // The definitions the run is pinned to against the folders' (the position is read in the pinned ones).
      const defs = await definitionsView({ rawState: detail.metadata?.state, defDirs: c.defDirs, readPin: async (s) => (c.roots.store === undefined ? readPinIn(detail.summary.runDir, s) : storePin(await storeAt(c.roots.store, c.roots.repoRoot), detail.summary.id, s)), now: io.now().getTime() });
      const position = positionOf(detail, c.defDirs, defs.registry);
      const budget = await budgetView(c.roots.store === undefined ? detail.summary.runDir : { store: await storeAt(c.roots.store, c.roots.repoRoot), slug: detail.summary.id }, detail.metadata?.createdAt, detail.metadata?.state, defs.registry ?? null, io.now().getTime());
      const doc = { ...detail, position, definitions: defs.view, budget };
      if (fields !== undefined) printJson(io, JSON_SCHEMAS.show, pick(doc, fields));
      else if (c.json) printJson(io, JSON_SCHEMAS.show, doc);
      else io.stdout.write(showText(detail, position, defs.view, budget));
      // What could be read is shown; the run itself could not be, and the exit code says so (as journal's does).
      const unreadable = detail.summary.error;
      if (unreadable !== null) throw new CliFailure({ code: unreadable.code, message: `run ${detail.summary.id} cannot be read: ${plainMessage(unreadable.message)}` }, EXIT.failed);
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
      // Each look reads only the entries past the last one printed; a page's first state is told against the
      // last state of the page before (the carry).
      let seen = 0;
      const carry: SentenceCarry = {};
      const print = (entries: readonly JournalEntryLike[]) => {
        const texts = journalSentences(entries, carry);
        entries.forEach((e, i) => {
          seen = e.seq;
          const text = texts[i] ?? e.event;
          io.stdout.write(c.json ? `${JSON.stringify({ schema: JSON_SCHEMAS.journal, ...e, text })}\n` : `${journalLine(e, text)}\n`);
        });
      };
      print(await runJournal(location, c.roots));
      // An unreadable state ends the follow only when a second look agrees and no live holder may be mid-write.
      let unreadableLooks = 0;
      while (o.follow === true) {
        // One reading of the run per look: its holder, then its summary and the entries past the last one printed.
        // A holder gone at that check journaled all it will before the reads (withRunRead): nothing to read again.
        const detail = await withRunRead(c.roots, c.roots.store === undefined ? location.runDir : location.slug, io.now().getTime(), async (r) => ({ summary: r.summary, live: r.live, journal: await r.journal(seen) }));
        print(detail.journal);
        const unreadable = detail.summary.error;
        const next = followVerdict(unreadableLooks, detail.summary, detail.live);
        unreadableLooks = next.unreadableLooks;
        if (next.verdict === "unreadable" && unreadable !== null) throw new CliFailure({ code: unreadable.code, message: `run ${location.slug} cannot be followed: ${plainMessage(unreadable.message)}` }, EXIT.failed);
        if (next.verdict === "ended") break;
        await new Promise((r) => setTimeout(r, o.interval));
      }
    });
}

async function showStep(io: CliIo, json: boolean, roots: Roots, location: RunLocation, stepId: string): Promise<void> {
  const p = await stepPayload(roots, location, stepId);
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

const LIST_FIELDS = ["id", "runDir", "status", "ownerTool", "phase", "currentStep", "lastStep", "createdAt", "updatedAt", "ageMs", "lockHolder", "lockStale", "error"] as const satisfies readonly (keyof RunSummary)[];
const SHOW_FIELDS = ["summary", "metadata", "steps", "pending", "position", "definitions", "budget"] as const;

function fieldList(value: string): string[] {
  return value.split(",").map((f) => f.trim()).filter((f) => f !== "");
}

/** The fields asked for, each one of `known` (else bad usage naming the valid ones); undefined when not asked. */
function checkFields<F extends string>(asked: string[] | undefined, known: readonly F[]): F[] | undefined {
  if (asked === undefined) return undefined;
  const unknown = asked.filter((f) => !(known as readonly string[]).includes(f));
  if (asked.length === 0 || unknown.length > 0) usage(`--fields ${unknown.join(",") || "(empty)"}: not a field; pick from ${known.join(", ")}.`, { field: "fields", value: asked.join(",") });
  return asked as F[];
}

function pick<T extends object, F extends keyof T>(row: T, fields: readonly F[]): Pick<T, F> {
  return Object.fromEntries(fields.map((f) => [f, row[f]])) as Pick<T, F>;
}

/** `currentStep` → `CURRENT_STEP`. */
function columnName(field: string): string {
  return field.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase();
}

function cell(value: unknown): string {
  if (value === null || value === undefined) return "-";
  return typeof value === "object" ? JSON.stringify(value) : String(value);
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
export function positionOf(detail: RunDetail, defDirs: readonly string[], registry?: WorkflowRegistry): Position | null {
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
  const active = resolveActive(registry ?? loadDefinitionFolders(defDirs).registry, state);
  if (!active.ok) return { ...base, statusLine: null, unresolved: active.error.message };
  const line = active.active === null ? null : statusLine(active.active);
  return { ...base, statusLine: line?.ok === true ? line.text : null, unresolved: line?.ok === false ? line.error.message : null };
}

function showText(d: RunDetail, position: Position | null, defs: DefinitionsView | null, budget: BudgetView | null): string {
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
  if (defs) {
    const [first, ...rest] = definitionsLines(defs);
    kv("defs", first ?? "");
    lines.push(...rest.map((l) => `${" ".repeat(11)}${l}`));
  }
  if (budget !== null) kv("budget", budgetLine(budget));
  if (d.pending) kv("pending", `${d.pending.signal} requested at ${d.pending.requestedAt} by pid ${d.pending.requestedBy.pid}: ${d.pending.reason}`);
  if (d.stepsError !== null) lines.push(`  steps    cannot be read: ${d.stepsError.message}`);
  else if (d.steps.length === 0) lines.push("  steps    none yet");
  else {
    lines.push("  steps");
    const rows = d.steps.map((st) => [st.stepId, st.superseded ? `${st.status} (superseded${st.rerunSpent ? ", rerun spent" : ""})` : st.status, String(st.attempt), st.durationMs === null ? "-" : duration(st.durationMs), st.startedAt, st.error ?? ""]);
    lines.push(...table(["STEP", "STATUS", "ATTEMPT", "DURATION", "STARTED", "ERROR"], rows).trimEnd().split("\n").map((l) => `    ${l}`));
  }
  return `${lines.join("\n")}\n`;
}

/** Commander parser for the positive integer option `flag` (a bad value is bad usage, exit 2). */
export function positiveInt(flag: string): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < 1) usage(`${flag} ${JSON.stringify(value)} is not a positive integer.`, { field: flag.replace(/^--/, ""), value });
    return n;
  };
}
