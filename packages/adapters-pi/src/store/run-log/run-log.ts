/**
 * The run log: the one source of truth of a run (steps, outputs, states, events), fenced by epoch. Opening it
 * claims the next epoch; a step miss costs one fdatasync (the `started` record rides along unsynced); a reuse
 * hit is an index lookup plus one read of the output's bytes. docs/decisions.md argues why a displaced holder
 * can never make its writes visible; test/run-log.*.test.ts hold it.
 */
import path from "node:path";
import { workflowError, type WorkflowError } from "@phasekit/core";
import { encodeCanonical } from "../../io/canonical-json.js";
import type { JsonValue } from "../../io/plain-json.js";
import { RERUN_EVENT, type RerunReason } from "../../engine/reuse-decision.js";
import { RERUN_SPENT_EVENT } from "../../engine/rerun-spent.js";
import { runStep } from "../../engine/step-flow.js";
import type { StepPort, StoredOutput } from "../../engine/step-port.js";
import { claimRunLog } from "./claim.js";
import { compactRunLog, type CompactionReport } from "./compaction.js";
import { settleAtClose } from "./fold.js";
import type { LogParts } from "./log-parts.js";
import { encodeLine, type DoneRecord, type StartRecord } from "./format.js";
import type { StepEntry } from "./run-index.js";
import { OutputChain } from "./output-chain.js";
import { readOutputText } from "./output-delta.js";
import { moveAside, readArtifact, writeArtifact } from "./run-artifacts.js";
import { RerunMarks } from "./rerun-marks.js";
import { eventsOf, placedEventsOf, StateKeeper, type PlacedEvent } from "./state-keeper.js";
import { countTimeline, timelineOf, type TimelineItem } from "./timeline.js";
import { ValueFiles } from "./values.js";
import type { FsBoundary } from "./segment-writer.js";

/** Why a step ran instead of being reused. */
export type RunLogRerunReason = RerunReason;

/** Outcome of `RunLog.step`. */
export type RunLogStepOutcome<T> =
  | { reused: true; output: T; entry: StepEntry }
  | { reused: false; reason: RunLogRerunReason; output: T; entry: StepEntry; /** Where a damaged stored output was moved. */ movedAside?: string };

/** What a run log asks of its lock right before a step's body (see `SegmentWriter.fenceBody`). */
export interface BodyGuardOptions {
  /**
   * The lock's own check that it is still this holder's (`PlanLock.stillHolding`): undefined at once while its
   * heartbeat is fresh, else a promise that rejects with LOCK_LOST when the lock was taken. Without it, only the
   * segment fence guards a body.
   */
  beforeBody?: (() => Promise<void> | undefined) | undefined;
}

/** Options of `openRunLog`. */
export interface OpenRunLogOptions extends BodyGuardOptions {
  /** The run folder (must exist); the log lives in `<runDir>/runlog/`. */
  runDir: string;
  /** Outputs whose canonical JSON is at most this many bytes live in the log line (default 64 KiB). */
  inlineMax?: number;
  /** Compact once this many records are superseded (and more than are live); 0 turns it off (default 10,000). */
  autoCompactAfter?: number;
  /** Test hook: called before every file-system call that writes, syncs or fences, with its name. */
  beforeFsCall?: FsBoundary;
  /** Clock for the records' times, epoch ms (default Date.now). */
  now?: () => number;
}

/** A claimed run log (the holder's view). Every method throws LOCK_LOST once a newer epoch took the run over. */
export interface RunLog {
  readonly runDir: string;
  readonly epoch: number;
  /** Reuses the completed step `key` when its input fingerprint matches and its output verifies; else runs `fn` (the engine's flow). */
  step<T extends JsonValue | void>(key: string, input: unknown, fn: (attempt: number) => T | Promise<T>, known?: { inputFingerprint: string }): Promise<RunLogStepOutcome<T>>;
  /** The fs side of a step, for the engine (engine/step-flow.ts): what `step` runs over. */
  readonly stepPort: StepPort<StepEntry, StartRecord>;
  /** The latest record of a step. */
  entry(key: string): StepEntry | undefined;
  /** The latest record of every step. */
  entries(): StepEntry[];
  /** Whether the history holds any rerun mark (spent or not), read from its events, not from the step records. */
  hasRerunMarks(): boolean;
  /** Records the workflow state (stored as a delta on the previous one when that is much smaller). */
  putState(state: JsonValue): Promise<void>;
  /** The latest recorded state, or undefined. */
  state(): JsonValue | undefined;
  /** Appends a control or lifecycle event (durable). */
  event(name: string, data: JsonValue): Promise<void>;
  /** The data of every event named `name`, oldest first. */
  events(name: string): JsonValue[];
  /** `events`, each with where it lies (named when a reader finds it damaged). */
  placedEvents(name: string): PlacedEvent[];
  /** Every state generation and event, in history order, from position `from` (see timeline.ts). */
  timeline(from?: number): Generator<TimelineItem>;
  /** How many state and event records the history holds (no value is read). */
  timelineCount(): number;
  /** Writes a snapshot, switches the history to it, then deletes what only this epoch's older history used. */
  compact(): Promise<CompactionReport>;
  /**
   * Closes the files, first settling the history (fold.ts): a claim that wrote nothing removes its segment; a
   * long chain or a segment past 4 MiB is folded into a snapshot and the segments it superseded are deleted.
   * Every later write is refused with `ended` (default: LOCK_LOST naming the closed log), before any work.
   */
  close(ended?: WorkflowError): Promise<void>;
}

const DEFAULT_INLINE_MAX = 64 * 1024;
const DEFAULT_AUTO_COMPACT = 10_000;

/** Claims the next epoch of the run log of `runDir` and loads its index. */
export async function openRunLog(options: OpenRunLogOptions): Promise<RunLog> {
  const runDir = path.resolve(options.runDir);
  const inlineMax = options.inlineMax ?? DEFAULT_INLINE_MAX;
  const autoCompactAfter = options.autoCompactAfter ?? DEFAULT_AUTO_COMPACT;
  const boundary: FsBoundary = options.beforeFsCall ?? (() => undefined);
  const now = options.now ?? Date.now;
  const values = new ValueFiles();
  const claim = await claimRunLog(runDir, boundary, values).catch((error: unknown) => {
    values.close();
    throw error;
  });
  const { writer, epoch, dir } = claim;
  writer.beforeBody = options.beforeBody;
  values.register(writer.file, writer.handle.fd);
  const parts: LogParts = { runDir, dir, epoch, writer, values, index: claim.chain.index, boundary, snapshots: 0, claimed: claim.facts };
  const states = new StateKeeper(parts);
  const outputs = new OutputChain(writer);
  const marks = new RerunMarks(parts.index, values, dir);

  // Set by close(): a write through a closed log would reach a closed file descriptor.
  let ended: WorkflowError | undefined;
  let closing: Promise<void> | undefined;
  // Writes under way (an append, then the index update that makes it part of the history): close lets each land
  // or fail before it folds, or the fold's snapshot could leave out a record already acknowledged.
  const writing = new Set<Promise<unknown>>();
  const tracked = <A extends unknown[], R>(write: (...args: A) => Promise<R>) => (...args: A): Promise<R> => {
    const p = write(...args);
    writing.add(p);
    const off = (): void => void writing.delete(p);
    p.then(off, off);
    return p;
  };
  const checkLost = (): void => {
    if (ended !== undefined) throw ended;
    if (writer.lost !== undefined) throw writer.lost;
  };

  async function appendRecord(header: Parameters<typeof encodeLine>[0], payload: string | undefined, durable: boolean): Promise<{ offset: number; line: Buffer }> {
    const line = encodeLine(header, payload);
    const offset = await writer.append(line, durable);
    return { offset, line };
  }

  async function maybeCompact(): Promise<void> {
    if (ended !== undefined) return; // the close folds
    const live = parts.index.steps.size + 1;
    const superseded = parts.index.records - live;
    if (autoCompactAfter > 0 && superseded >= autoCompactAfter && superseded > live) await compactRunLog(parts, states);
  }

  async function reuse(entry: StepEntry): Promise<StoredOutput> {
    if (entry.artifact !== undefined) {
      const r = await readArtifact(runDir, entry.artifact, entry.outputFingerprint as string);
      if (r.ok) return { ok: true, output: JSON.parse(r.text) };
      if (r.reason === "missing") return { ok: false, reason: "artifact-missing" };
      // Damaged or planted: kept as evidence under another name (compaction would delete it under this one).
      checkLost();
      return { ok: false, reason: "artifact-corrupt", movedAside: await moveAside(parts, entry.artifact) };
    }
    if (entry.output === undefined) return { ok: false, reason: "artifact-missing" };
    const r = readOutputText(parts.values, entry.output, entry.outputFingerprint);
    return r.ok ? { ok: true, output: JSON.parse(r.text) } : { ok: false, reason: r.reason === "missing" ? "artifact-missing" : "artifact-corrupt" };
  }

  // Steps between their start and their end: a step ending while no other is open syncs its record at once
  // (SegmentWriter.append `alone`), since no other step's end can share that sync.
  const open = new Set<StartRecord>();
  // The fs side of a step (engine/step-port.ts); the flow itself is the engine's (engine/step-flow.ts).
  const stepPort: StepPort<StepEntry, StartRecord> = {
    mayWrite: checkLost,
    latest: (key) => marks.view(parts.index.steps.get(key)),
    stored: (entry) => reuse(entry),
    start: tracked(async ({ key, attempt, inputFingerprint }) => {
      const st = now();
      const started: StartRecord = { t: "start", e: epoch, k: key, in: inputFingerprint, a: attempt, at: st };
      // Written (to the page cache) before fn runs, so a killed process leaves it for the next run to count the
      // attempt; not synced: only a power cut can lose it, and then the next run does not know fn may have run.
      await appendRecord(started, undefined, false);
      parts.index.steps.set(key, { key, status: "started", epoch, inputFingerprint, attempt, at: st, startedAt: st });
      parts.index.records++;
      open.add(started);
      return started;
    }),
    // A holder already displaced does not start the work at all (SegmentWriter.fenceBody): its result could never be
    // acknowledged, and its side effects would race the new holder's.
    beforeBody: () => writer.fenceBody(),
    fail: tracked(async (s, err) => {
      open.delete(s);
      checkLost();
      const at = now();
      await appendRecord({ t: "fail", e: epoch, k: s.k, in: s.in, a: s.a, err, at, st: s.at }, undefined, false);
      parts.index.steps.set(s.k, { key: s.k, status: "failed", epoch, inputFingerprint: s.in, attempt: s.a, error: err, at, startedAt: s.at });
      // Counted as a reader counts it (run-index.ts): what auto-compaction and the report see does not lag the file.
      parts.index.records++;
    }),
    complete: tracked(async (s, { text, value, fingerprint: outputFingerprint }) => {
      const { k: key, in: inputFingerprint, a: attempt, at: st } = s;
      const at = now();
      const done: DoneRecord = { t: "done", e: epoch, k: key, in: inputFingerprint, a: attempt, ofp: outputFingerprint, at, st };
      let entry: StepEntry;
      const alone = open.size === 1 && open.has(s);
      open.delete(s);
      // A body that ran while the log was closed (its store closed, its lock released) records nothing.
      checkLost();
      if (Buffer.byteLength(text) <= inlineMax) {
        const output = await outputs.append(done, text, value, alone);
        entry = { key, status: "completed", epoch, inputFingerprint, attempt, outputFingerprint, output, at, startedAt: st };
      } else {
        const art = await writeArtifact(parts, text, outputFingerprint);
        await appendRecord({ ...done, art }, undefined, true);
        entry = { key, status: "completed", epoch, inputFingerprint, attempt, outputFingerprint, artifact: art, at, startedAt: st };
      }
      parts.index.steps.set(key, entry);
      parts.index.records++;
      await maybeCompact();
      return entry;
    }),
  };

  async function step<T extends JsonValue | void>(key: string, input: unknown, fn: (attempt: number) => T | Promise<T>, known?: { inputFingerprint: string }): Promise<RunLogStepOutcome<T>> {
    checkKey(key);
    const r = await runStep(stepPort, key, input, fn, known);
    if (r.reused) return { reused: true, output: r.output, entry: r.record };
    return { reused: false, reason: r.reason, output: r.output, entry: r.record, ...(r.movedAside === undefined ? {} : { movedAside: r.movedAside }) };
  }

  return {
    runDir,
    epoch,
    step,
    stepPort,
    entry: (key) => marks.view(parts.index.steps.get(key)),
    entries: () => [...parts.index.steps.values()].map((e) => marks.view(e) as StepEntry),
    hasRerunMarks: () => marks.all().length > 0,
    putState: tracked(async (state) => {
      checkLost();
      await states.put(state);
    }),
    state: () => states.current(),
    event: tracked(async (name, data) => {
      checkLost();
      const { offset, line } = await appendRecord({ t: "event", e: epoch, name }, encodeCanonical(data), true);
      const length = line.length - 1 - (line.indexOf(0x09) + 1);
      parts.index.events.push({ name, epoch, data: { file: writer.file, offset: offset + line.indexOf(0x09) + 1, length }, pos: parts.index.nextPos++ });
      parts.index.records++;
      if (name === RERUN_EVENT || name === RERUN_SPENT_EVENT) marks.reset();
    }),
    events: (name) => eventsOf(parts.index, parts.values, name),
    placedEvents: (name) => placedEventsOf(parts.index, parts.values, name, dir),
    timeline: (from) => timelineOf(parts.index, parts.values, from),
    timelineCount: () => countTimeline(parts.index),
    compact: () => (checkLost(), compactRunLog(parts, states)),
    close(why) {
      // Once: a second close (a release racing the store's close) waits for the first instead of folding again.
      return (closing ??= (async () => {
        ended ??= why ?? workflowError("run-log", "LOCK_LOST", `the run log of epoch ${epoch} in ${dir} is closed; nothing more is written to it.`, { file: dir, field: "epoch", value: epoch, hint: "take the run's lock again to write to it" });
        // Step ends still queued to share a sync are refused now, not flushed later against the closed file.
        writer.close(ended);
        // Writes already under way land (or fail) first, then a compaction a step started ends: the fold below must
        // not run beside either, nor the files close under them.
        await Promise.allSettled([...writing]);
        await writer.quiet();
        // Best effort (fold.ts): a failure here loses nothing, the log is complete as it is.
        await settleAtClose(parts, states).catch(() => undefined);
        // Best effort too: room left behind reads as a torn tail (segment-writer.ts), it only costs bytes.
        try {
          writer.trimRoom();
        } catch {
          // see above
        }
        parts.values.close();
        await writer.handle.close().catch(() => undefined);
      })());
    },
  };
}

function checkKey(key: unknown): asserts key is string {
  if (typeof key !== "string" || key === "" || key.length > 1024) {
    throw workflowError("run-log", "INVALID_OPTIONS", `step key ${JSON.stringify(key)} is not a non-empty string of at most 1,024 characters.`, {
      field: "key",
      value: typeof key === "string" ? key.slice(0, 80) : typeof key,
      hint: "name steps with short ids",
    });
  }
}
