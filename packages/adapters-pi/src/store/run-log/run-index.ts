/**
 * The in-memory index of a run, folded from its log once at open and kept current by every append: the latest
 * record of each step, where each value lies, and the state chain. A reuse hit is a map lookup plus one read of
 * the output's bytes; nothing else touches the disk.
 */
import type { DecodedLine } from "./format.js";
import type { ValueLocation } from "./entry-types.js";
import { payloadOf } from "./payload-of.js";
import { entryOf, StepIndex, type BaseSteps } from "./step-index.js";

export type { StepEntry, ValueLocation } from "./entry-types.js";

/** The state chain: the latest full state and the deltas after it, in order. */
export interface StateChain {
  n: number;
  full: ValueLocation | undefined;
  deltas: ValueLocation[];
}

/** Everything the run log knows, without the values themselves. */
export interface RunIndex {
  steps: StepIndex;
  state: StateChain;
  events: Array<{ name: string; epoch: number; data: ValueLocation | undefined }>;
  /** Records folded since the last base (what compaction would shrink). */
  records: number;
}

/** An empty index (a new run), or one whose steps start as `base` (a snapshot's). */
export function emptyIndex(base?: BaseSteps): RunIndex {
  return { steps: new StepIndex(base), state: { n: 0, full: undefined, deltas: [] }, events: [], records: 0 };
}

/** Folds one decoded line of `file` into the index. Head, snap and base lines are the reader's business. */
export function applyLine(index: RunIndex, file: string, line: DecodedLine): void {
  const r = line.record;
  const p = line.payload ?? payloadOf(r);
  if (line.step !== undefined) {
    index.steps.setLazy(line.step.key, file, line.step.epoch, line.start, line.step.header, p === undefined ? undefined : { file, offset: p.offset, length: p.length });
    index.records++;
    return;
  }
  switch (r.t) {
    case "start":
    case "done":
    case "fail":
      index.steps.set(r.k, entryOf(r, p === undefined ? undefined : { file, offset: p.offset, length: p.length }));
      index.records++;
      return;
    case "state": {
      if (p === undefined) return;
      const loc: ValueLocation = { file, offset: p.offset, length: p.length };
      index.state.n = r.n;
      if (r.d === 0) {
        index.state.full = loc;
        index.state.deltas = [];
      } else index.state.deltas.push(loc);
      index.records++;
      return;
    }
    case "event":
      index.events.push({ name: r.name, epoch: r.e, data: p === undefined ? undefined : { file, offset: p.offset, length: p.length } });
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
