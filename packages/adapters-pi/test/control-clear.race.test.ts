/**
 * clearControlRequest removes only the very request it read: a newer request filed by another process between
 * its read and its removal (any process may withdraw a pause now) survives. The filing is injected at that moment
 * through the fs port: right after the clear opened the file to read it.
 */
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { nodeFs, type FsPort } from "../src/io/fs-port.js";
import { clearControlRequest, controlFile, newControlRequest, readControlRequest, writeControlRequest } from "../src/store/control-signals.js";

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

describe("clearControlRequest against a newer filing", () => {
  it("keeps a pause filed between its read and its removal", async () => {
    const runDir = mkdtempSync(path.join(tmpdir(), "pk-clear-race-"));
    dirs.push(runDir);
    const old = newControlRequest("pause", "first", () => "2026-01-01T00:00:00.000Z");
    const newer = newControlRequest("pause", "second", () => "2026-01-01T00:00:01.000Z");
    await writeControlRequest(runDir, old);
    let filed = false;
    const racing: FsPort = {
      ...nodeFs,
      open: async (p, flags, mode) => {
        const handle = await nodeFs.open(p, flags, mode);
        // The clear has the old request's file open: another process files a newer pause now.
        if (!filed && p === controlFile(runDir, "pause")) {
          filed = true;
          await writeControlRequest(runDir, newer);
        }
        return handle;
      },
    };
    await clearControlRequest(runDir, old, { fs: racing });
    expect(filed).toBe(true);
    const left = await readControlRequest(runDir);
    expect(left).toEqual({ ok: true, request: newer });
    // Nothing set aside is left behind.
    expect(readdirSync(runDir)).toEqual(["pause-request.json"]);
  });

  it("still removes the request it read when nothing else was filed", async () => {
    const runDir = mkdtempSync(path.join(tmpdir(), "pk-clear-race-"));
    dirs.push(runDir);
    const req = newControlRequest("pause", "only");
    await writeControlRequest(runDir, req);
    await clearControlRequest(runDir, req);
    expect(readdirSync(runDir)).toEqual([]);
  });
});
