/**
 * Reading a run log without claiming it: what the CLI, `readMetadata` and a resume analysis see. It folds
 * exactly what the head accepted, so a displaced holder's late bytes are invisible here too. Nothing is written.
 *
 * A reader races the holder: a compaction deletes the snapshot and segments it superseded, and a claim that
 * wrote nothing deletes its own segment at close, each possibly between a reader's listing and its reads. Such a
 * reader re-lists and re-reads (`loadChainSettled`) instead of reporting corruption: a failure is reported only
 * when it repeats, word for word, on a folder that did not change meanwhile (or after READ_ATTEMPTS tries). The
 * same retry covers a record the holder is writing into its segment's room at that moment: read mid-copy, its
 * line can hold its newline before all of its middle (docs/decisions.md, D14 "Room"), and the next read sees it
 * whole (a folder's stamp does not move for a write in place, but the damage does not repeat word for word). The
 * files the loaded history points into are opened at once and kept, so values read later never chase a name a
 * compaction removed.
 */
import path from "node:path";
import { lstatSync } from "node:fs";
import type { JsonValue } from "../../io/plain-json.js";
import { RUN_LOG_DIR } from "./format.js";
import { segmentName } from "./file-names.js";
import { loadChain, type LoadedChain } from "./read-chain.js";
import type { StepEntry } from "./run-index.js";
import { RerunMarks } from "./rerun-marks.js";
import { eventsOf, placedEventsOf, stateOf, type PlacedEvent } from "./state-keeper.js";
import { ValueFiles } from "./values.js";
import { countTimeline, timelineOf, type TimelineItem } from "./timeline.js";
import { readArtifact } from "./run-artifacts.js";
import { readOutputText } from "./output-delta.js";

/** A read-only view of a run log. Call `close()` when done (it holds read descriptors). */
export interface RunLogView {
  /** The epoch of the head segment (the holder whose history this is). */
  readonly epoch: number;
  entries(): StepEntry[];
  entry(key: string): StepEntry | undefined;
  /** The step's output as JSON text, checked against its fingerprint; undefined when absent or damaged. */
  outputText(entry: StepEntry): Promise<string | undefined>;
  state(): JsonValue | undefined;
  events(name: string): JsonValue[];
  /** `events`, each with where it lies (named when a reader finds it damaged). */
  placedEvents(name: string): PlacedEvent[];
  /** Every state generation and event, in history order, from position `from` (see timeline.ts). */
  timeline(from?: number): Generator<TimelineItem>;
  /** How many state and event records the history holds (no value is read). */
  timelineCount(): number;
  close(): void;
}

/** The run log of `runDir`, or null when the run has none (a run of the earlier format, or no step yet). */
export async function readRunLog(runDir: string): Promise<RunLogView | null> {
  const values = new ValueFiles();
  const chain = await loadChainSettled(path.join(runDir, RUN_LOG_DIR), values).catch((error: unknown) => {
    values.close();
    throw error;
  });
  if (chain.headEpoch === 0) {
    values.close();
    return null;
  }
  const { index } = chain;
  const marks = new RerunMarks(index, values, path.join(runDir, RUN_LOG_DIR));
  return {
    epoch: chain.headEpoch,
    entries: () => [...index.steps.values()].map((e) => marks.view(e) as StepEntry),
    entry: (key) => marks.view(index.steps.get(key)),
    async outputText(entry) {
      if (entry.artifact !== undefined && entry.outputFingerprint !== undefined) {
        const a = await readArtifact(runDir, entry.artifact, entry.outputFingerprint);
        if (a.ok || a.reason !== "missing") return a.ok ? a.text : undefined;
        // A compaction since this view was read may have replaced the artifact by another epoch's copy of the
        // same output: ask the history as it is now (undefined if the step's output changed meanwhile).
        const now = await readRunLog(runDir);
        const fresh = now?.entry(entry.key);
        try {
          if (now === null || fresh?.artifact === undefined || fresh.artifact === entry.artifact || fresh.outputFingerprint !== entry.outputFingerprint) return undefined;
          return await now.outputText(fresh);
        } finally {
          now?.close();
        }
      }
      if (entry.output === undefined) return undefined;
      const r = readOutputText(values, entry.output, entry.outputFingerprint);
      return r.ok ? r.text : undefined;
    },
    state: () => stateOf(index, values),
    events: (name) => eventsOf(index, values, name),
    placedEvents: (name) => placedEventsOf(index, values, name, path.join(runDir, RUN_LOG_DIR)),
    timeline: (from) => timelineOf(index, values, from),
    timelineCount: () => countTimeline(index),
    close: () => values.close(),
  };
}

/** Tries before a failure is reported even though the folder kept changing (a holder compacting nonstop). */
const READ_ATTEMPTS = 50;

/**
 * `loadChain` of `dir` into `values`, settled against a concurrent holder (see the module comment): on success
 * every file the history points into is open in `values`; on failure `values` is left empty.
 */
export async function loadChainSettled(dir: string, values: ValueFiles): Promise<LoadedChain> {
  let previous: string | undefined;
  for (let attempt = 1; ; attempt++) {
    const before = folderStamp(dir);
    try {
      const chain = await loadChain(dir, values);
      holdPinned(dir, chain, values);
      return chain;
    } catch (error) {
      values.close();
      const after = folderStamp(dir);
      const failure = `${after}\n${error instanceof Error ? error.message : String(error)}`;
      if (attempt >= READ_ATTEMPTS || (before === after && failure === previous)) throw error;
      previous = failure;
      // Past the first retries, give the holder time to finish what it is doing.
      if (attempt > 3) await new Promise((resolve) => setTimeout(resolve, Math.min(attempt, 20)));
    }
  }
}

// Opens (and keeps) every segment the history reads values from: a compaction may delete it from now on.
function holdPinned(dir: string, chain: LoadedChain, values: ValueFiles): void {
  for (const [epoch, from, to] of chain.accepted.pins) if (to > from) values.descriptor(path.join(dir, segmentName(epoch)));
}

// What changes whenever a name is created or removed in the folder (its mtime and ctime), without listing it.
function folderStamp(dir: string): string {
  try {
    const st = lstatSync(dir, { bigint: true });
    return `${st.ino}:${st.mtimeNs}:${st.ctimeNs}`;
  } catch (error) {
    return `(${(error as { code?: string }).code ?? String(error)})`;
  }
}
