/**
 * A segment's zero-filled room is an optimization of the sync after a record (segment-file.ts): writing it may
 * fail (a disk nearly full, a file-size limit) after the record itself was written whole. These tests hold that
 * such a failure costs nothing the record did not: the record stays, and above all a newer holder that already
 * pinned it keeps a history it can read.
 */
import { describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { openRunLog } from "../src/store/run-log/run-log.js";
import { readRunLog } from "../src/store/run-log/reader.js";

const CLAIMER = fileURLToPath(new URL("./helpers/runlog-claim-step.mjs", import.meta.url));
const FSIZE_CHILD = fileURLToPath(new URL("./helpers/runlog-fsize-child.mjs", import.meta.url));
const temp = (): string => mkdtempSync(path.join(tmpdir(), "phasekit-room-failure-"));
const segments = (runDir: string): string[] => readdirSync(path.join(runDir, "runlog")).filter((n) => n.endsWith(".seg")).sort();
const noSpace = (): Error => Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });

describe("run log: writing a segment's room fails after the record was written", () => {
  it("a newer holder that pinned the record while the old one was inside write(room) keeps a readable history", async () => {
    const runDir = temp();
    let armed = true;
    let claimed = "";
    const old = await openRunLog({
      runDir,
      inlineMax: 4096,
      beforeFsCall: (name) => {
        if (name !== "write(room)" || !armed) return;
        armed = false;
        // The old holder is frozen here (a stop, a long pause): its record is written whole, its room not yet.
        // A newer holder claims the run, pins that record, acknowledges a step and closes.
        claimed = spawnSync(process.execPath, [CLAIMER, runDir], { encoding: "utf8" }).stdout.trim();
        // Then the old holder's room write fails: the disk filled up meanwhile.
        throw noSpace();
      },
    });
    // Displaced, the old holder acknowledges nothing more (its fence, or the failed write, says so).
    await expect(old.step("a", {}, () => ({ by: "old" }))).rejects.toMatchObject({ code: expect.stringMatching(/^(LOCK_LOST|WRITE_FAILED)$/) });
    await old.close();
    expect(claimed).toBe("ok 2");
    // The newer holder acknowledged x: every later reader must read it.
    const view = await readRunLog(runDir);
    expect(view?.entry("x")?.status).toBe("completed");
    view?.close();
    const next = await openRunLog({ runDir, inlineMax: 4096 });
    expect((await next.step("x", {}, () => ({ by: "rerun" }))).reused).toBe(true);
    await next.close();
  });

  it("a record that was written whole is acknowledged even when its room cannot be written", async () => {
    const runDir = temp();
    let failRoom = false;
    const log = await openRunLog({
      runDir,
      inlineMax: 4096,
      beforeFsCall: (name) => {
        if (name === "write(room)" && failRoom) throw noSpace();
      },
    });
    failRoom = true;
    // Before the room, an append of these few hundred bytes succeeded on the same disk.
    const a = await log.step("a", {}, () => ({ v: "a" }));
    expect(a.output).toEqual({ v: "a" });
    await log.close();
    const file = path.join(runDir, "runlog", segments(runDir)[0] as string);
    const bytes = readFileSync(file);
    expect(bytes.length).toBe(bytes.lastIndexOf(0x0a) + 1);
    const view = await readRunLog(runDir);
    expect(view?.entry("a")?.status).toBe("completed");
    view?.close();
  });

  it("under a file-size limit that the records fit in but the room does not, the steps are acknowledged (real EFBIG)", () => {
    const runDir = temp();
    // 128 KiB: twenty small steps take a few KiB; 256 KiB of room after the first one does not fit.
    const r = spawnSync("bash", ["-c", `ulimit -f 128 && exec "${process.execPath}" "${FSIZE_CHILD}" log "${runDir}" 20`], { encoding: "utf8" });
    const lines = r.stdout.trim().split("\n");
    expect(lines.find((l) => l.startsWith("error")), r.stderr).toBeUndefined();
    expect(lines.filter((l) => l.startsWith("ok"))).toHaveLength(20);
    expect(lines).toContain("closed");
    const file = path.join(runDir, "runlog", segments(runDir)[0] as string);
    expect(statSync(file).size).toBeLessThan(128 * 1024);
  });

  it("runWorkflow under a 200 KiB file-size limit completes a few small steps (it did before the room)", () => {
    const repo = temp();
    const r = spawnSync("bash", ["-c", `ulimit -f 200 && exec "${process.execPath}" "${FSIZE_CHILD}" workflow "${repo}" 5`], { encoding: "utf8" });
    expect(r.stdout.trim().split("\n").at(-1), r.stderr).toBe("status completed");
  });
});
