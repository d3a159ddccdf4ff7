/**
 * A durable batch whose write landed whole but whose fdatasync failed (EIO: a disk that lost the pages, or one
 * full for its metadata). Its records are in the segment, complete, but were never acknowledged, and the holder's
 * view of the run does not hold them: a state delta it wrote next would be read on the base of that record, not
 * the one it meant. The holder writes nothing more (WRITE_FAILED naming the segment); the next one reads the
 * segment as it is.
 */
import { describe, expect, it } from "vitest";
import { mkdtempSync } from "node:fs";
import type { JsonValue } from "../src/io/plain-json.js";
import { tmpdir } from "node:os";
import path from "node:path";
import { openRunLog } from "../src/store/run-log/run-log.js";
import { readRunLog } from "../src/store/run-log/reader.js";

const temp = (): string => mkdtempSync(path.join(tmpdir(), "phasekit-failed-sync-"));
const eio = (): Error => Object.assign(new Error("EIO: i/o error, fdatasync"), { code: "EIO" });
/** A state large enough that a change of one field is stored as a delta on the state before it. */
const big = (v: number, extra?: string): JsonValue => ({ v, pad: Array.from({ length: 40 }, (_, i) => `entry ${i}`), ...(extra === undefined ? {} : { extra }) });

describe("run log: a durable batch written whole whose sync fails", () => {
  it("is WRITE_FAILED naming the segment, and the holder writes nothing more: no state delta on the wrong base", async () => {
    const runDir = temp();
    let fail = false;
    const log = await openRunLog({
      runDir,
      inlineMax: 4096,
      beforeFsCall: (name) => {
        if (fail && name === "fdatasync") {
          fail = false;
          throw eio();
        }
      },
    });
    await log.putState(big(1));
    fail = true;
    const error = await log.putState(big(2, "only in state 2")).then(() => undefined, (e: unknown) => e);
    expect(error).toMatchObject({ code: "WRITE_FAILED", details: { file: expect.stringMatching(/\.seg$/), errno: "EIO" } });
    // The record of state 2 is in the segment; a delta written now on state 1 would be read on state 2.
    await expect(log.putState(big(3))).rejects.toMatchObject({ code: "WRITE_FAILED" });
    await expect(log.step("after", {}, () => 1)).rejects.toMatchObject({ code: "WRITE_FAILED" });
    await log.close();
    const view = await readRunLog(runDir);
    // What the next holder reads: the segment as it is (state 2 was written whole, never acknowledged).
    expect(view?.state()).toEqual(big(2, "only in state 2"));
    view?.close();
    const next = await openRunLog({ runDir, inlineMax: 4096 });
    await next.putState(big(4));
    await next.close();
    const after = await readRunLog(runDir);
    expect(after?.state()).toEqual(big(4));
    after?.close();
  });

  // The other sync of a durable batch: the folder's fsync, made once, before the first batch's fdatasync.
  it("the folder's fsync before the first batch's fdatasync: the same, WRITE_FAILED and nothing more written", async () => {
    const runDir = temp();
    const log = await openRunLog({
      runDir,
      inlineMax: 4096,
      beforeFsCall: (name) => {
        if (name === "fsync(runlog folder)") throw eio();
      },
    });
    await expect(log.putState(big(1, "never acknowledged"))).rejects.toMatchObject({ code: "WRITE_FAILED", details: { errno: "EIO" } });
    await expect(log.putState(big(2))).rejects.toMatchObject({ code: "WRITE_FAILED" });
    await log.close();
    const next = await openRunLog({ runDir, inlineMax: 4096 });
    expect(next.state()).toEqual(big(1, "never acknowledged"));
    await next.putState(big(3));
    await next.close();
    const after = await readRunLog(runDir);
    expect(after?.state()).toEqual(big(3));
    after?.close();
  });
});
