import { describe, expect, it } from "vitest";
import { batches, layoutSnapshot, planSnapshot, type PlannedItem } from "../src/store/run-log/snapshot-layout.js";

describe("a compaction's snapshot streams its values", () => {
  it("planning reads no value; writing reads each once, in file order, a batch at a time; the bytes equal the eager layout", () => {
    const values = Array.from({ length: 300 }, (_, i) => Buffer.from(JSON.stringify({ i, pad: "p".repeat(10_000) }), "utf8"));
    const reads: number[] = [];
    const planned: PlannedItem[] = values.map((bytes, i) => ({
      header: { t: "done", e: 1, k: `s${String(i).padStart(3, "0")}`, in: "f", a: 1, ofp: "x" },
      payload: { length: bytes.length, read: () => (reads.push(i), bytes) },
    }));
    const { index, payloads } = planSnapshot(1, planned);
    expect(reads).toEqual([]);
    const out: Buffer[] = [];
    let most = 0;
    for (const chunk of batches([index, ...payloads])) {
      out.push(Buffer.from(chunk)); // a copy: batches reuses its group buffer
      // At most about one batch (1 MiB) of values was read ahead of what was written.
      most = Math.max(most, reads.length * values[0]!.length - (Buffer.concat(out).length - index.length));
    }
    expect(reads).toEqual(values.map((_, i) => i));
    expect(most).toBeLessThanOrEqual((1 << 20) + values[0]!.length);
    const eager = layoutSnapshot(1, values.map((bytes, i) => ({ header: planned[i]!.header, payload: bytes })));
    expect(Buffer.concat(out).equals(Buffer.concat(eager))).toBe(true);
  });
});
