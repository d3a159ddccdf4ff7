/**
 * The step records a compaction writes, with their outputs re-chained for the snapshot (output-delta.ts): in
 * the order the run first recorded the steps, an output its holder stored as a delta is written as a delta on the
 * output placed just before it in the snapshot's payload section (so `back` is that output's length), under the
 * same rule and keyframe interval as a holder's segment; an output stored whole stays whole. The snapshot's
 * chains therefore never point into the files it supersedes, whatever chains those held.
 *
 * Every output is checked against its fingerprint first (one that no longer verifies is not carried forward: the
 * step reruns, as it would have anyway); a delta is small and kept, a full value is read again when its batch is
 * written, so a compaction holds one full output at a time.
 */
import type { JsonValue } from "../../io/plain-json.js";
import type { RunLogRecord } from "./format.js";
import type { LogParts } from "./log-parts.js";
import { materialize, MAX_OUTPUT_CHAIN, outputDeltaPayload, verifiedText } from "./output-delta.js";
import type { StepEntry, ValueLocation } from "./run-index.js";
import type { LazyPayload, PlannedItem } from "./snapshot-layout.js";
import { smallDelta } from "./state-delta.js";

/** The output written last in the snapshot being planned (its value parsed only when a delta needs it). */
interface Previous {
  loc: ValueLocation;
  value: JsonValue | undefined;
  length: number;
  delta: boolean;
  links: number;
}

/**
 * The step items of a snapshot of `parts`, in the order the run first recorded them. Their payloads must be laid
 * out one after the other in this order (snapshot-layout.ts `planSnapshot` keeps the items' order).
 *
 * An output its holder stored whole (unlike the one before it, or a keyframe, or of an earlier format) stays
 * whole, checked in a reused buffer and not parsed: a run of unrelated outputs costs what it cost before deltas
 * (a 10,000-step run of them parsed and diffed 10,000 values at close for nothing). An output stored as a delta
 * is chained on the output placed before it.
 */
export function snapshotStepItems(parts: LogParts): PlannedItem[] {
  const out: PlannedItem[] = [];
  let previous: Previous | undefined;
  for (const s of parts.index.steps.values()) {
    const base = { e: s.epoch, k: s.key, in: s.inputFingerprint, a: s.attempt, ...(s.at === undefined ? {} : { at: s.at }) };
    const st = s.startedAt === undefined ? {} : { st: s.startedAt };
    if (s.status === "started") out.push({ header: { t: "start", ...base } });
    else if (s.status === "failed") out.push({ header: { t: "fail", ...base, err: s.error ?? "", ...st } });
    else {
      const done: RunLogRecord = { t: "done", ...base, ofp: s.outputFingerprint as string, ...(s.artifact === undefined ? {} : { art: s.artifact }), ...st };
      const loc = s.output;
      const fp = s.outputFingerprint as string;
      if (loc === undefined) {
        out.push({ header: done });
        continue;
      }
      if (loc.delta !== true) {
        // An output that no longer verifies is not carried forward: the step reruns, as it would have anyway.
        if (!parts.values.readBytes(loc, fp, true).ok) {
          out.push({ header: { t: "start", ...base } });
          continue;
        }
        out.push({ header: done, payload: fullAgain(parts, s, loc, loc.length) });
        previous = { loc, value: undefined, length: loc.length, delta: false, links: 0 };
        continue;
      }
      const value = materialize(parts.values, loc);
      const text = verifiedText(value, fp);
      if (text === undefined) {
        out.push({ header: { t: "start", ...base } });
        continue;
      }
      parts.values.lastOutput = { file: loc.file, offset: loc.offset, value };
      const ops = previous !== undefined && previous.links < MAX_OUTPUT_CHAIN ? smallDelta((previous.value ??= materialize(parts.values, previous.loc)), value, text.length) : undefined;
      if (previous !== undefined && ops !== undefined) {
        // Text, not a buffer: 10,000 small buffers outlived the compaction in the allocator's slabs.
        const payload = outputDeltaPayload(previous.length, previous.length, previous.delta, ops);
        const length = Buffer.byteLength(payload, "utf8");
        out.push({ header: { ...done, d: 1 }, payload: { length, read: () => payload } });
        previous = { loc, value, length, delta: true, links: previous.links + 1 };
      } else {
        const length = Buffer.byteLength(text, "utf8");
        out.push({ header: done, payload: fullAgain(parts, s, loc, length) });
        previous = { loc, value, length, delta: false, links: 0 };
      }
    }
  }
  return out;
}

// A full output, read (and checked) again when its batch is written.
function fullAgain(parts: LogParts, s: StepEntry, loc: ValueLocation, length: number): LazyPayload {
  const changed = (detail: string): Error => new Error(`compaction: the output of ${s.key} changed while it was copied (${detail})`);
  return {
    length,
    read: () => {
      if (loc.delta === true) {
        const text = verifiedText(materialize(parts.values, loc), s.outputFingerprint as string);
        if (text === undefined) throw changed("its delta chain gives another value");
        return text;
      }
      const again = parts.values.readBytes(loc, s.outputFingerprint, true);
      if (!again.ok) throw changed(again.detail);
      return again.bytes;
    },
  };
}
