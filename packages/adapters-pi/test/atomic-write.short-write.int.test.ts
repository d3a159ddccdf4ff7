import { describe, it, expect } from "vitest";
import { spawnSync } from "node:child_process";
import { mkdtemp, readFile, readdir, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { isWorkflowError } from "@phasekit/core";
import { writeFileAtomic } from "../src/io/atomic-write.js";
import { readWorkflowMetadata, writeWorkflowMetadata } from "../src/store/metadata.js";
import { failingFs, type FailingFs } from "./helpers/failing-fs.js";
import { sampleMetadata } from "./helpers/metadata-fixtures.js";

const child = fileURLToPath(new URL("./helpers/short-writer.mjs", import.meta.url));
const OLD = '{"version": "old"}\n';

/** Runs the child under a 8 KiB file-size limit with SIGXFSZ ignored, so writes past it fail (EFBIG) or come back short. */
function underLimit(file: string, which: "ours" | "wfa", bytes: number): { ok: boolean; code?: string; details?: { step?: string } } {
  const script = `ulimit -f 8; trap '' XFSZ; exec "$0" "$@"`;
  const r = spawnSync("bash", ["-c", script, process.execPath, child, file, which, String(bytes)], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`child failed: ${r.stderr}`);
  return JSON.parse(r.stdout.trim()) as { ok: boolean; code?: string };
}

async function dirWith(content: string): Promise<{ dir: string; file: string }> {
  const dir = await mkdtemp(path.join(tmpdir(), "phasekit-short-"));
  const file = path.join(dir, "workflow.json");
  await writeFile(file, content);
  return { dir, file };
}

describe("short write under ulimit -f", () => {
  it("writeFileAtomic reports WRITE_FAILED and keeps the previous version", async () => {
    const { dir, file } = await dirWith(OLD);
    const out = underLimit(file, "ours", 20_010);
    expect(out.ok).toBe(false);
    expect(out.code).toBe("WRITE_FAILED");
    expect(out.details?.step).toBe("write");
    expect(await readFile(file, "utf8")).toBe(OLD);
    expect(await readdir(dir)).toEqual(["workflow.json"]);
  });
  it("reproduces write-file-atomic 7.0.1 committing a truncated file (why it is not used; docs/decisions.md)", async () => {
    const { file } = await dirWith(OLD);
    const out = underLimit(file, "wfa", 20_010);
    const after = await readFile(file, "utf8");
    expect(out.ok).toBe(true);
    expect(after.length).toBe(8192);
    expect(after).not.toBe(OLD);
  });
});

describe("an fs that fails the Nth call, for every N", () => {
  it("writeFileAtomic: each failure is a WorkflowError, the previous version intact, no temp file left", async () => {
    const { dir, file } = await dirWith(OLD);
    const next = JSON.stringify({ version: "new", fill: "y".repeat(50_000) });
    let succeeded = false;
    for (let n = 1; n < 50 && !succeeded; n++) {
      const { fs } = failingFs(n);
      try {
        await writeFileAtomic(file, next, { fs });
        succeeded = true;
        expect(await readFile(file, "utf8")).toBe(next);
      } catch (error) {
        expect(isWorkflowError(error, "WRITE_FAILED")).toBe(true);
        const committed = (error as { details: { committed?: boolean } }).details.committed;
        // Only the folder fsync comes after the rename: then the new bytes are in place, and the error says so.
        expect(await readFile(file, "utf8")).toBe(committed ? next : OLD);
        if (committed) await writeFile(file, OLD);
      }
      expect(await readdir(dir)).toEqual(["workflow.json"]);
    }
    expect(succeeded).toBe(true);
  });
  it("writeWorkflowMetadata: each failure is a typed refusal and the previous generation stays readable", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "phasekit-nth-"));
    const file = path.join(dir, "workflow.json");
    const first = await writeWorkflowMetadata(file, sampleMetadata("run-n", 0), { expectedGeneration: null });
    if (!first.ok) throw first.error;
    const before = await readFile(file);
    const write = (fs?: FailingFs["fs"]) => writeWorkflowMetadata(file, sampleMetadata("run-n", 1, 4000), { expectedGeneration: 1, fs });
    // The generation check reads while the new file is written, so the order of calls varies from run to run;
    // a failure may land on the read's close, which is harmless and ignored. Every call of a write is tried.
    const probe = failingFs(0);
    expect((await write(probe.fs)).ok).toBe(true);
    const calls = probe.calls();
    let refused = 0;
    for (let n = 1; n <= calls + 2; n++) {
      await writeFile(file, before);
      const w = await write(failingFs(n).fs);
      if (w.ok) {
        expect(await readFile(file)).not.toEqual(before);
      } else {
        expect(["READ_FAILED", "WRITE_FAILED"]).toContain(w.error.code);
        refused++;
        // Only the folder fsync comes after the rename: then the new bytes are in place, and the error says so.
        if (w.error.details.committed === true) expect(await readFile(file)).not.toEqual(before);
        else expect(await readFile(file)).toEqual(before);
      }
      expect(await readdir(dir)).toEqual(["workflow.json"]);
    }
    expect(refused).toBeGreaterThan(5);
    const r = await readWorkflowMetadata(file);
    expect(r.ok && r.metadata?.generation).toBe(2);
  });
  it("ENOSPC and EFBIG on write are WRITE_FAILED with a disk-space hint", async () => {
    for (const code of ["ENOSPC", "EFBIG"]) {
      const { file } = await dirWith(OLD);
      const probe = failingFs(0);
      await writeFileAtomic(file, "z", { fs: probe.fs });
      const writeCall = probe.log.indexOf("handle.write") + 1;
      await writeFile(file, OLD);
      const { fs } = failingFs(writeCall, code);
      const error = await writeFileAtomic(file, "new", { fs }).then(() => undefined, (e: unknown) => e);
      expect(isWorkflowError(error, "WRITE_FAILED")).toBe(true);
      expect((error as Error).message).toMatch(/free disk space/);
      expect(await readFile(file, "utf8")).toBe(OLD);
    }
  });
});
