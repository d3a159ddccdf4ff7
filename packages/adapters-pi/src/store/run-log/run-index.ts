/**
 * The in-memory index of a run, folded from its log once at open and kept current by every append: the latest
 * record of each step, where each value lies, and the state chain. A reuse hit is a map lookup plus one read of
 * the output's bytes; nothing else touches the disk.
 */
import type { DecodedLine, DoneRecord, FailRecord, StartRecord } from "./format.js";

/** Where a value's bytes lie: a file of the run log (absolute path), offset and length. */
export interface ValueLocation {
  file: string;
  offset: number;
  length: number;
}

/** The latest record of one step key. */
export interface StepEntry {
  key: string;
  status: "started" | "completed" | "failed";
  epoch: number;
  inputFingerprint: string;
  attempt: number;
  outputFingerprint?: string;
  /** Artifact path relative to the run folder, when the output is not inline. */
  artifact?: string;
  /** The inline output's bytes. */
  output?: ValueLocation;
  error?: string;
}

/** The state chain: the latest full state and the deltas after it, in order. */
export interface StateChain {
  n: number;
  full: ValueLocation | undefined;
  deltas: ValueLocation[];
}

/** Everything the run log knows, without the values themselves. */
export interface RunIndex {
  steps: Map<string, StepEntry>;
  state: StateChain;
  events: Array<{ name: string; epoch: number; data: ValueLocation | undefined }>;
  /** Records folded since the last base (what compaction would shrink). */
  records: number;
}

/** An empty index (a new run, or the point where a snapshot starts). */
export function emptyIndex(): RunIndex {
  return { steps: new Map(), state: { n: 0, full: undefined, deltas: [] }, events: [], records: 0 };
}

/** Folds one decoded line of `file` into the index. Head, snap and base lines are the reader's business. */
export function applyLine(index: RunIndex, file: string, line: DecodedLine): void {
  const r = line.record;
  const at = (): ValueLocation | undefined => (line.payload === undefined ? undefined : { file, offset: line.payload.offset, length: line.payload.length });
  switch (r.t) {
    case "start":
    case "done":
    case "fail":
      index.steps.set(r.k, entryOf(r, at()));
      index.records++;
      return;
    case "state": {
      const loc = at();
      if (loc === undefined) return;
      index.state.n = r.n;
      if (r.d === 0) {
        index.state.full = loc;
        index.state.deltas = [];
      } else index.state.deltas.push(loc);
      index.records++;
      return;
    }
    case "event":
      index.events.push({ name: r.name, epoch: r.e, data: at() });
      index.records++;
      return;
    case "head":
    case "snap":
    case "base":
      return;
    default: {
      const never: never = r;
      return never;
    }
  }
}

function entryOf(r: StartRecord | DoneRecord | FailRecord, output: ValueLocation | undefined): StepEntry {
  const base = { key: r.k, epoch: r.e, inputFingerprint: r.in, attempt: r.a };
  if (r.t === "start") return { ...base, status: "started" };
  if (r.t === "fail") return { ...base, status: "failed", error: r.err };
  return {
    ...base,
    status: "completed",
    outputFingerprint: r.ofp,
    ...(r.art === undefined ? {} : { artifact: r.art }),
    ...(output === undefined ? {} : { output }),
  };
}
