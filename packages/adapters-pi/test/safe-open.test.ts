import { describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync, writeFileSync, mkdirSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { isWorkflowError } from "@phasekit/core";
import { nodeFs } from "../src/io/fs-port.js";
import { assertRealDir, openRegular, readRegular } from "../src/io/safe-open.js";
import { cleanTempFiles, syncDir } from "../src/io/atomic-write.js";
import { ensurePrivateDir } from "../src/io/plan-paths.js";
import { foreignIntact, plant } from "./hostile/fixtures.js";

function dirs(): { inside: string; outside: string } {
  const base = mkdtempSync(path.join(tmpdir(), "phasekit-safe-open-"));
  const inside = path.join(base, "run");
  const outside = path.join(base, "outside");
  mkdirSync(inside);
  mkdirSync(outside);
  return { inside, outside };
}

const code = (p: Promise<unknown>) => p.then(() => "resolved", (e: unknown) => (isWorkflowError(e) ? e.code : String(e)));

describe("openRegular / readRegular", () => {
  for (const mode of ["read", "append", "update"] as const) {
    it(`refuses a symlink (${mode}) and leaves its target untouched`, async () => {
      const { inside, outside } = dirs();
      const file = path.join(inside, "f");
      const { foreign } = plant("symlink", file, outside);
      expect(await code(openRegular(nodeFs, file, mode))).toBe("UNSAFE_FILE");
      expect(foreignIntact(foreign as string)).toBe(true);
    });
    it(`refuses a FIFO (${mode}) at once instead of hanging`, async () => {
      const { inside, outside } = dirs();
      const file = path.join(inside, "f");
      plant("fifo", file, outside);
      expect(await code(openRegular(nodeFs, file, mode))).toBe("UNSAFE_FILE");
    });
  }
  it("refuses a folder in place of a file", async () => {
    const { inside } = dirs();
    mkdirSync(path.join(inside, "d"));
    expect(await code(openRegular(nodeFs, path.join(inside, "d"), "read"))).toBe("UNSAFE_FILE");
    expect(await code(openRegular(nodeFs, path.join(inside, "d"), "append"))).toBe("UNSAFE_FILE");
  });
  it("caps a huge file with a typed error naming it, without reading it", async () => {
    const { inside, outside } = dirs();
    const file = path.join(inside, "big");
    plant("huge", file, outside);
    const error = await readRegular(nodeFs, file, { maxBytes: 1024 }).catch((e: unknown) => e);
    expect(isWorkflowError(error, "FILE_TOO_LARGE")).toBe(true);
    expect((error as Error).message).toContain(file);
  });
  it("reads a regular file and returns null for a missing one", async () => {
    const { inside } = dirs();
    writeFileSync(path.join(inside, "ok"), "hello");
    expect((await readRegular(nodeFs, path.join(inside, "ok"), { maxBytes: 10 }))?.toString()).toBe("hello");
    expect(await readRegular(nodeFs, path.join(inside, "missing"), { maxBytes: 10 })).toBeNull();
  });
});

describe("folders", () => {
  it("assertRealDir refuses a symlinked folder; syncDir refuses to follow one", async () => {
    const { inside, outside } = dirs();
    symlinkSync(outside, path.join(inside, "artifacts"));
    expect(await code(assertRealDir(nodeFs, path.join(inside, "artifacts")))).toBe("UNSAFE_FILE");
    expect(await code(syncDir(nodeFs, path.join(inside, "artifacts")))).not.toBe("resolved");
  });
  it("cleanTempFiles never deletes through a symlinked folder", async () => {
    const { inside, outside } = dirs();
    const foreign = path.join(outside, ".x.json.1.0123456789ab.tmp");
    writeFileSync(foreign, "keep");
    symlinkSync(outside, path.join(inside, "artifacts"));
    expect(await code(cleanTempFiles(path.join(inside, "artifacts"), { force: true }))).toBe("UNSAFE_FILE");
    expect(readFileSync(foreign, "utf8")).toBe("keep");
  });
  it("a file in place of a run folder is UNSAFE_FILE, not a raw EEXIST", async () => {
    const { inside } = dirs();
    writeFileSync(path.join(inside, "slug"), "x");
    expect(await code(ensurePrivateDir(path.join(inside, "slug")))).toBe("UNSAFE_FILE");
  });
});
