import fs, { existsSync, mkdtempSync } from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { readRunLog } from "../src/store/run-log/reader.js";
import { openRunLog } from "../src/store/run-log/run-log.js";
import { spawnLines, type LineChild } from "./helpers/spawn-child.js";

const COMPACTOR = fileURLToPath(new URL("./helpers/runlog-compactor.mjs", import.meta.url));
// PHASEKIT_READS=100000 measures once at scale (docs/decisions.md, "Readers never write"); CI keeps the default.
const READS = readsFromEnv(process.env.PHASEKIT_READS, 4_000);
const SNAPSHOT = /snap-\d{10}-\d{6}\.ndjson$/;

function readsFromEnv(raw: string | undefined, fallback: number): number {
  if (raw === undefined || raw === "") return fallback;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < 1) throw new Error(`PHASEKIT_READS must be a positive integer, got ${JSON.stringify(raw)}`);
  return n;
}

async function compacting(): Promise<{ runDir: string; writer: LineChild }> {
  const runDir = mkdtempSync(path.join(tmpdir(), "phasekit-readers-"));
  const writer = spawnLines(process.execPath, [COMPACTOR, runDir]);
  await writer.waitFor(/^ready$/);
  return { runDir, writer };
}

/** One whole read: the index, the state and a completed step's output. */
async function readOnce(runDir: string): Promise<void> {
  const view = await readRunLog(runDir);
  if (view === null) throw new Error("no history");
  try {
    expect(view.entries().length).toBe(20);
    expect(view.state()).toMatchObject({ pad: expect.any(String) });
    for (const key of ["inline", "artifact"]) {
      const entry = view.entry(key);
      if (entry === undefined) throw new Error(`no step ${key}`);
      expect(JSON.parse((await view.outputText(entry)) ?? "null"), key).toEqual(key === "inline" ? { small: true } : { pad: expect.any(String) });
    }
  } finally {
    view.close();
  }
}

async function stop(writer: LineChild): Promise<number> {
  writer.end();
  const done = await writer.waitFor(/^compactions \d+$/);
  return Number(done.split(" ")[1]);
}

describe("readers racing a compaction (a real child compacting in a loop)", () => {
  it("a reader whose snapshot is deleted between its listing and its open re-reads instead of reporting corruption", async () => {
    const { runDir, writer } = await compacting();
    // The delayed syscall: the reader's first open of a snapshot waits until the compacting child has deleted
    // that very file (waiting on the event, not on a clock), then goes on. Before the retry this was CORRUPT_FILE.
    const realOpen = fs.openSync;
    let delayed: string | undefined;
    const tick = new Int32Array(new SharedArrayBuffer(4));
    fs.openSync = ((file: fs.PathLike, ...rest: unknown[]) => {
      if (delayed === undefined && typeof file === "string" && SNAPSHOT.test(file)) {
        delayed = file;
        while (existsSync(file)) Atomics.wait(tick, 0, 0, 1);
      }
      return (realOpen as (...a: unknown[]) => number)(file, ...rest);
    }) as typeof fs.openSync;
    syncBuiltinESMExports();
    try {
      await readOnce(runDir);
    } finally {
      fs.openSync = realOpen;
      syncBuiltinESMExports();
      await stop(writer);
      writer.proc.kill("SIGKILL");
    }
    expect(delayed).toMatch(SNAPSHOT);
  }, 30_000);

  it(`${READS} reads while it compacts: every one sees a whole history, none fails`, async () => {
    const { runDir, writer } = await compacting();
    try {
      const errors: string[] = [];
      const started = performance.now();
      for (let i = 0; i < READS; i++) {
        await readOnce(runDir).catch((error: unknown) => errors.push(`${(error as { code?: string }).code ?? ""} ${String(error)}`.slice(0, 300)));
        if (i % 200 === 0) await new Promise((r) => setImmediate(r));
      }
      const seconds = (performance.now() - started) / 1000;
      // The race was real: the child compacted many times while we read.
      const compactions = await stop(writer);
      if (process.env.PHASEKIT_READS) console.log(`readers: ${errors.length} errors in ${READS} reads, ${seconds.toFixed(1)} s, ${compactions} compactions meanwhile`);
      expect(compactions).toBeGreaterThan(50);
      expect(errors.slice(0, 5), `${errors.length} of ${READS} reads failed`).toEqual([]);
    } finally {
      writer.proc.kill("SIGKILL");
    }
  }, 60_000 + READS * 15);

  it("a view whose artifact a later compaction replaced by another epoch's copy of the same output still reads it", async () => {
    const runDir = mkdtempSync(path.join(tmpdir(), "phasekit-readers-"));
    const same = { pad: "a".repeat(400) };
    const a = await openRunLog({ runDir, inlineMax: 200 });
    await a.step("x", { v: 1 }, () => same);
    await a.close();
    const view = await readRunLog(runDir);
    const entry = view?.entry("x");
    // Another runner reruns x (new input, same output): its artifact is named by its own epoch, and its
    // compaction deletes the first one, which nothing references any more.
    const b = await openRunLog({ runDir, inlineMax: 200 });
    await b.step("x", { v: 2 }, () => same);
    expect((await b.compact()).artifactsRemoved).toBe(1);
    await b.close();
    try {
      expect(entry?.artifact).toBeDefined();
      expect(existsSync(path.join(runDir, entry?.artifact ?? ""))).toBe(false);
      expect(JSON.parse((await view?.outputText(entry!)) ?? "null")).toEqual(same);
    } finally {
      view?.close();
    }
  });
});
