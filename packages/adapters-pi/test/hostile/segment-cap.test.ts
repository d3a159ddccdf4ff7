/**
 * The writer side of the segment cap: readers refuse a segment above MAX_FILE_BYTES.log without reading it, so
 * the holder never grows one past it (FILE_TOO_LARGE naming the segment, nothing written, the log as it was).
 */
import { describe, expect, it } from "vitest";
import { mkdtempSync, promises as fsp, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { isWorkflowError } from "@phasekit/core";
import { MAX_FILE_BYTES } from "../../src/io/safe-open.js";
import { SegmentWriter } from "../../src/store/run-log/segment-writer.js";

describe("run log: the writer stops short of the segment cap", () => {
  it("an append that would cross the cap is FILE_TOO_LARGE naming the segment; nothing is written", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "phasekit-segcap-"));
    const file = path.join(dir, "0000000001.seg");
    const handle = await fsp.open(file, "a+");
    // A writer that believes the segment already holds nearly the cap (what a long run reaches).
    const writer = new SegmentWriter(handle, file, dir, 1, MAX_FILE_BYTES.log - 10, () => undefined);
    const error = await writer.append(Buffer.from(`${"x".repeat(100)}\n`), true).then(
      () => undefined,
      (e: unknown) => e,
    );
    await handle.close();
    expect(isWorkflowError(error, "FILE_TOO_LARGE"), String(error)).toBe(true);
    expect((error as Error).message).toContain(file);
    expect(readFileSync(file, "utf8")).toBe("");
  });
});
