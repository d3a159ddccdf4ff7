/**
 * The holder's side of output deltas (output-delta.ts): each inline output is appended as a delta on the last
 * output this holder wrote to its segment when the delta is small (the states' rule, state-delta.ts
 * `smallDelta`), and whole otherwise or every MAX_OUTPUT_CHAIN outputs. A base is always an output whose
 * `done` line was already synced and acknowledged in the same segment, so a delta never outlives its base: the
 * bytes before it in its own file are never cut (a failed write is cut back to where it started, or to a record it
 * left whole, after them either way).
 */
import type { JsonValue } from "../../io/plain-json.js";
import { encodeLine, type DoneRecord } from "./format.js";
import type { ValueLocation } from "./entry-types.js";
import { MAX_OUTPUT_CHAIN, outputDeltaPayload } from "./output-delta.js";
import { smallDelta } from "./state-delta.js";
import type { SegmentWriter } from "./segment-writer.js";

/** The last output written: where its bytes lie, what it is, and how many deltas lead to it from a full value. */
interface Written {
  offset: number;
  length: number;
  delta: boolean;
  value: JsonValue;
  links: number;
}

/** Appends `done` lines with their outputs inline, as deltas where that pays (see the module comment). */
export class OutputChain {
  private last: Written | undefined;

  constructor(private readonly writer: SegmentWriter) {}

  /**
   * Appends (durably) the `done` line of an output whose canonical JSON is `text`; its location (`alone`:
   * SegmentWriter.append). `value` is kept as the next base: it must be this chain's own copy (equal to
   * `JSON.parse(text)`), since the caller's object may be changed after the step returns it.
   */
  async append(done: DoneRecord, text: string, value: JsonValue, alone = false): Promise<ValueLocation> {
    const base = this.last;
    const ops = base !== undefined && base.links < MAX_OUTPUT_CHAIN ? smallDelta(base.value, value, text.length) : undefined;
    let written: Written;
    if (base === undefined || ops === undefined) {
      const line = encodeLine(done, text);
      const offset = await this.writer.append(line, true, alone);
      const length = Buffer.byteLength(text);
      written = { offset: offset + line.length - 1 - length, length, delta: false, value, links: 0 };
    } else {
      const header: DoneRecord = { ...done, d: 1 };
      const headBytes = Buffer.byteLength(JSON.stringify(header));
      let length = 0;
      // The distance to the base is known only where the line lands (the batch is laid out when written).
      const offset = await this.writer.append((at) => {
        const payload = outputDeltaPayload(at + headBytes + 1 - base.offset, base.length, base.delta, ops);
        length = Buffer.byteLength(payload);
        return encodeLine(header, payload);
      }, true, alone);
      written = { offset: offset + headBytes + 1, length, delta: true, value, links: base.links + 1 };
    }
    this.last = written;
    return { file: this.writer.file, offset: written.offset, length: written.length, delta: written.delta };
  }
}
