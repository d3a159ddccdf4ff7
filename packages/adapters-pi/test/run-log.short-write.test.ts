/**
 * A batch of records whose write is cut short and then fails (a disk filling up between the parts of a short
 * write): the records it left whole stay, only the torn one after them goes (segment-file.ts). A holder frozen
 * between those parts may have been displaced meanwhile, its newer holder pinning it up to the records it found
 * whole; a cut below that pin made every later read of the run CORRUPT_FILE.
 */
import { describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import type * as FsModule from "node:fs";
import { createRequire, syncBuiltinESMExports } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { openRunLog } from "../src/store/run-log/run-log.js";
import { readRunLog } from "../src/store/run-log/reader.js";

const CLAIMER = fileURLToPath(new URL("./helpers/runlog-claim-step.mjs", import.meta.url));
// node:fs's CommonJS face, whose functions can be swapped (syncBuiltinESMExports then updates the ESM one).
const fs = createRequire(import.meta.url)("node:fs") as { -readonly [K in keyof typeof FsModule]: (typeof FsModule)[K] };
const temp = (): string => mkdtempSync(path.join(tmpdir(), "phasekit-short-write-"));

/**
 * Runs `fn` with writeSync cut short once: the first write of a buffer holding the done records of both `p1` and
 * `p2` writes p1's record and part of p2's; the write of the rest calls `meanwhile`, then fails with ENOSPC.
 */
async function withShortWrite<T>(meanwhile: () => void, fn: () => Promise<T>): Promise<T> {
  const writeSync = fs.writeSync;
  let stage = 0;
  fs.writeSync = ((fd: number, buffer: Buffer, offset: number, length: number, position: number) => {
    const text = Buffer.isBuffer(buffer) ? buffer.toString("utf8", offset, offset + length) : "";
    if (stage === 0 && text.includes('"t":"done","e":1,"k":"p1"') && text.includes('"t":"done","e":1,"k":"p2"')) {
      stage = 1;
      const firstEnd = buffer.indexOf(0x0a, offset) + 1 - offset;
      return writeSync(fd, buffer, offset, firstEnd + 20, position);
    }
    if (stage === 1) {
      stage = 2;
      meanwhile();
      throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
    }
    return writeSync(fd, buffer, offset, length, position);
  }) as typeof fs.writeSync;
  syncBuiltinESMExports();
  try {
    return await fn();
  } finally {
    fs.writeSync = writeSync;
    syncBuiltinESMExports();
    expect(stage).toBe(2);
  }
}

describe("run log: a write of several records cut short, then failed", () => {
  it("a newer holder that pinned the record left whole keeps a readable history", async () => {
    const runDir = temp();
    const old = await openRunLog({ runDir, inlineMax: 4096 });
    await old.step("a", {}, () => ({ v: "a" }));
    let claimed = "";
    const steps = await withShortWrite(
      // Between the two parts of the short write, a newer holder claims, pins what it finds whole, acknowledges x.
      () => (claimed = spawnSync(process.execPath, [CLAIMER, runDir], { encoding: "utf8" }).stdout.trim()),
      () => Promise.allSettled([old.step("p1", {}, () => ({ v: "p1" })), old.step("p2", {}, () => ({ v: "p2" }))]),
    );
    expect(steps.map((s) => s.status)).toEqual(["rejected", "rejected"]);
    expect(claimed).toBe("ok 2");
    // It writes nothing more (refused as broken before any fence could see the newer holder).
    await expect(old.step("late", {}, () => 1)).rejects.toMatchObject({ code: expect.stringMatching(/^(LOCK_LOST|WRITE_FAILED)$/) });
    await old.close();
    // Every later reader reads the newer holder's history: x acknowledged, and p1 as it pinned it.
    const view = await readRunLog(runDir);
    expect(view?.entry("x")?.status).toBe("completed");
    expect(view?.entry("p1")?.status).toBe("completed");
    expect(view?.entry("p2")?.status).not.toBe("completed");
    view?.close();
    const next = await openRunLog({ runDir, inlineMax: 4096 });
    expect((await next.step("x", {}, () => ({ by: "rerun" }))).reused).toBe(true);
    expect((await next.step("a", {}, () => ({ v: "rerun" }))).reused).toBe(true);
    await next.close();
  });

  it("with no newer holder, the record left whole stays and the torn one goes; the holder writes nothing more, the next one goes on", async () => {
    const runDir = temp();
    const log = await openRunLog({ runDir, inlineMax: 4096 });
    await log.step("a", {}, () => ({ v: "a" }));
    await log.putState({ n: 1 });
    const steps = await withShortWrite(
      () => undefined,
      () => Promise.allSettled([log.step("p1", {}, () => ({ v: "p1" })), log.step("p2", {}, () => ({ v: "p2" }))]),
    );
    expect(steps.map((s) => s.status)).toEqual(["rejected", "rejected"]);
    // Typed, naming the segment and what stays in it, with the disk-space hint every failed write of ours gives.
    expect((steps[0] as PromiseRejectedResult).reason).toMatchObject({
      code: "WRITE_FAILED",
      message: expect.stringMatching(/ENOSPC.*bytes of whole records it wrote stay in the segment, unacknowledged/),
      details: { file: expect.stringMatching(/\.seg$/), errno: "ENOSPC", hint: expect.stringMatching(/^free disk space/) },
    });
    // Its view no longer matches the file (p1 is in it, unacknowledged): a state delta built on that view would be
    // read on the wrong base. So it refuses every later write, naming the segment.
    await expect(log.step("c", {}, () => ({ v: "c" }))).rejects.toMatchObject({ code: "WRITE_FAILED", details: { file: expect.stringMatching(/\.seg$/) } });
    await log.close();
    const seg = path.join(runDir, "runlog", readdirSync(path.join(runDir, "runlog")).find((n) => n.endsWith(".seg")) as string);
    const text = readFileSync(seg, "utf8");
    expect(text.endsWith("\n")).toBe(true);
    expect(text.split("\n").filter((l) => l.includes('"k":"p2"') && l.includes('"t":"done"'))).toEqual([]);
    // The next holder reads the segment as it is and goes on.
    const next = await openRunLog({ runDir, inlineMax: 4096 });
    expect((await next.step("p1", {}, () => ({ v: "again" }))).output).toEqual({ v: "p1" });
    expect((await next.step("c", {}, () => ({ v: "c" }))).reused).toBe(false);
    await next.putState({ n: 2 });
    expect(next.state()).toEqual({ n: 2 });
    await next.close();
    const view = await readRunLog(runDir);
    expect(["a", "p1", "c"].map((k) => view?.entry(k)?.status)).toEqual(["completed", "completed", "completed"]);
    view?.close();
  });
});
