import { describe, it, expect } from "vitest";
import { mkdtemp, readdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { cleanTempFiles } from "../src/io/atomic-write.js";
import { readFile } from "node:fs/promises";
import { readWorkflowMetadata } from "../src/store/metadata.js";
import { spawnChild } from "./helpers/spawn-child.js";

const writer = fileURLToPath(new URL("./helpers/metadata-writer.mjs", import.meta.url));
const CI = process.env.CI === "true";
// Most kills use the raw writeFileAtomic child (starts in ~90 ms); the rest go through writeWorkflowMetadata.
const RAW_KILLS = CI ? 400 : 40;
const META_KILLS = CI ? 60 : 10;
const PARALLEL = 2;
const PADDING = 20_000;

/** One round: start a writer on `file`, kill it at a random moment, check what survived. */
async function round(file: string, mode: "raw" | "meta"): Promise<{ acked: number; found: number }> {
  const child = spawnChild(writer, [file, mode, String(PADDING)]);
  const ready = await child.waitFor(/^ready \d+$/);
  const start = Number(ready.split(" ")[1]);
  await new Promise((r) => setTimeout(r, Math.random() * 8));
  child.proc.kill("SIGKILL");
  const exit = await child.exited;
  expect(exit.signal).toBe("SIGKILL");
  const acks = child.lines.filter((l) => l.startsWith("ack ")).map((l) => Number(l.slice(4)));
  const acked = acks.length > 0 ? Math.max(...acks) : start;

  const doc = await readVersion(file, mode);
  const found = doc?.generation ?? 0;
  // The last acknowledged version, or the one in flight after it; never anything older.
  expect([acked, acked + 1]).toContain(found);
  if (doc !== null) {
    const state = doc.state as { g: number; fill: string };
    expect(state.g).toBe(found);
    expect(state.fill).toBe(String(found % 10).repeat(PADDING));
    expect(doc.currentStepId).toBe(`step-${found}`);
  }
  await cleanTempFiles(path.dirname(file));
  expect((await readdir(path.dirname(file))).filter((n) => n !== "workflow.json")).toEqual([]);
  return { acked, found };
}

async function readVersion(file: string, mode: "raw" | "meta"): Promise<{ generation: number; state?: unknown; currentStepId?: string } | null> {
  if (mode === "meta") {
    const read = await readWorkflowMetadata(file);
    if (!read.ok) throw read.error;
    return read.metadata;
  }
  try {
    return JSON.parse(await readFile(file, "utf8")) as { generation: number; state: unknown; currentStepId: string };
  } catch (error) {
    if ((error as { code?: string }).code === "ENOENT") return null;
    throw error;
  }
}

/** Runs `kills` rounds on one file per lane, PARALLEL lanes at a time; returns how often the in-flight version won. */
async function run(mode: "raw" | "meta", kills: number): Promise<number> {
  const lanes = await Promise.all(
    Array.from({ length: PARALLEL }, async () => {
      const file = path.join(await mkdtemp(path.join(tmpdir(), "phasekit-crash-")), "workflow.json");
      let inFlight = 0;
      for (let i = 0; i < kills / PARALLEL; i++) {
        const r = await round(file, mode);
        if (r.found === r.acked + 1) inFlight++;
      }
      return inFlight;
    }),
  );
  const n = lanes.reduce((a, b) => a + b, 0);
  process.stderr.write(`[crash] ${mode}: ${kills} kills, ${n} found the version in flight after the last ack\n`);
  return n;
}

describe("atomic write under SIGKILL", () => {
  it(`writeFileAtomic: always the last acknowledged (or the in-flight) version, whole, over ${RAW_KILLS} kills`, async () => {
    await run("raw", RAW_KILLS);
  }, 300_000);
  it(`writeWorkflowMetadata: the same over ${META_KILLS} kills`, async () => {
    await run("meta", META_KILLS);
  }, 300_000);
});
