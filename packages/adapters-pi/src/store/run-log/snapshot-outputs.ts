/**
 * The step records a compaction writes, with their outputs re-chained for the snapshot (output-delta.ts): in
 * the order the run first recorded the steps, each inline output is written as a delta on the output written
 * just before it in the snapshot's payload section (so `back` is that output's length), under the same rule and
 * keyframe interval as a holder's segment. The snapshot's chains therefore never point into the files it
 * supersedes, whatever chains those held.
 *
 * Every output is materialized and checked against its fingerprint first (an output that no longer verifies
 * is not carried forward: the step reruns, as it would have anyway); a delta is small and kept, a full value is
 * read again when its batch is written, so a compaction holds one full output at a time.
 */
import type { JsonValue } from "../../io/plain-json.js";
import type { RunLogRecord } from "./format.js";
import type { LogParts } from "./log-parts.js";
import { materialize, MAX_OUTPUT_CHAIN, outputDeltaPayload, verifiedText } from "./output-delta.js";
import type { StepEntry, ValueLocation } from "./run-index.js";
import type { LazyPayload, PlannedItem } from "./snapshot-layout.js";
import { smallDelta } from "./state-delta.js";

/** The output written last in the snapshot being planned. */
interface Previous {
  value: JsonValue;
  length: number;
  delta: boolean;
  links: number;
}

/**
 * The step items of a snapshot of `parts`, in the order the run first recorded them. Their payloads must be laid
 * out one after the other in this order (snapshot-layout.ts `planSnapshot` keeps the items' order).
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
      if (loc === undefined) {
        out.push({ header: done });
        continue;
      }
      const got = outputOf(parts, loc, s.outputFingerprint as string);
      if (got === undefined) {
        out.push({ header: { t: "start", ...base } });
        continue;
      }
      const ops = previous !== undefined && previous.links < MAX_OUTPUT_CHAIN ? smallDelta(previous.value, got.value, got.textLength) : undefined;
      if (previous !== undefined && ops !== undefined) {
        const bytes = Buffer.from(outputDeltaPayload(previous.length, previous.length, previous.delta, ops), "utf8");
        out.push({ header: { ...done, d: 1 }, payload: { length: bytes.length, read: () => bytes } });
        previous = { value: got.value, length: bytes.length, delta: true, links: previous.links + 1 };
      } else {
        out.push({ header: done, payload: fullAgain(parts, s, loc, got.byteLength) });
        previous = { value: got.value, length: got.byteLength, delta: false, links: 0 };
      }
    }
  }
  return out;
}

/** The output at `loc`, materialized, if it verifies against `fp` (a chain that cannot be followed throws). */
function outputOf(parts: LogParts, loc: ValueLocation, fp: string): { value: JsonValue; textLength: number; byteLength: number } | undefined {
  const { values } = parts;
  if (loc.delta === true) {
    const value = materialize(values, loc);
    const text = verifiedText(value, fp);
    if (text === undefined) return undefined;
    values.lastOutput = { file: loc.file, offset: loc.offset, value };
    return { value, textLength: text.length, byteLength: Buffer.byteLength(text) };
  }
  const r = values.readBytes(loc, fp, true);
  if (!r.ok) return undefined;
  const text = r.bytes.toString("utf8");
  const value = JSON.parse(text) as JsonValue;
  // The next output of the source is often a delta on this one.
  values.lastOutput = { file: loc.file, offset: loc.offset, value };
  return { value, textLength: text.length, byteLength: loc.length };
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
