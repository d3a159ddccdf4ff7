/**
 * The goals of "one run, one history" (issue 17) that the run-log suite does not cover: bytes a run leaves
 * after close when its outputs (or its metadata) change a little each step, and what 1,000 lock acquisitions
 * leave behind. `BENCH_SMOKE=1` (and CI) shrink every count so the suite only proves it runs.
 */
import { execFileSync } from "node:child_process";
import { readdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createFsPlanStore, runWorkflow } from "@phasekit/adapters-pi";
import { goalRow, type BenchRow, type BenchSuite } from "../harness.js";
import { checkpointOf, folderBytes, jsonOfSize, sqliteSaver, tempDir } from "./contenders.js";
import { median, SMOKE } from "./interleave.js";

const N = SMOKE ? { steps: 50, resumes: 30, rssSteps: 200 } : { steps: 1_000, resumes: 1_000, rssSteps: 10_000 };
const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const RSS_CHILD = fileURLToPath(new URL("./rss-child.ts", import.meta.url));
const MiB = 1024 * 1024;

const row = goalRow;

/** A 10 KB state whose next version has ~200 B changed (two of its ~90 fields get new 100-byte values). */
function changing(): (i: number) => Record<string, string> {
  const state = jsonOfSize(10_000);
  const keys = Object.keys(state);
  return (i) => {
    for (const k of [keys[(i * 2) % keys.length], keys[(i * 2 + 1) % keys.length]]) state[k as string] = `${i}-changed-`.padEnd(100, "c");
    return { ...state };
  };
}

async function outputBytes(): Promise<BenchRow[]> {
  const repoRoot = tempDir("history-out");
  const next = changing();
  await runWorkflow({ repoRoot, target: "out", toolName: "bench" }, async (ctx) => {
    for (let i = 0; i < N.steps; i++) await ctx.step(`s${i}`, { i }, () => next(i));
  });
  const sqliteDir = tempDir("history-sqlite");
  const saver = sqliteSaver(sqliteDir);
  const again = changing();
  for (let i = 0; i < N.steps; i++) {
    const c = checkpointOf("out", i, again(i));
    await saver.put(c.config, c.checkpoint, c.metadata);
  }
  saver.db.close();
  const ours = folderBytes(path.join(repoRoot, "ai_plan", "out"));
  const label = `bytes after close: ${N.steps.toLocaleString("en")} ctx.step outputs of 10 KB, 200 B changed each (fs)`;
  return [row(label, "budget 1 MiB", ours, MiB, "≤ 1.0×", 1, "bytes"), row(label, "SqliteSaver, same values", ours, folderBytes(sqliteDir), "report", Infinity, "bytes")];
}

async function metadataBytes(): Promise<BenchRow[]> {
  const repoRoot = tempDir("history-meta");
  const store = createFsPlanStore({ repoRoot });
  const got = await store.lock("meta", { owner: { tool: "bench" } });
  if (!got.ok) throw got.error;
  const via = got.lock.store ?? store;
  const next = changing();
  let generation: number | null = null;
  const at = new Date(0).toISOString();
  for (let i = 0; i < N.steps; i++) {
    const w = await via.writeMetadata("meta", { slug: "meta", ownerTool: "bench", currentTool: "bench", status: "running", createdAt: at, updatedAt: at, state: next(i) }, generation);
    if (!w.ok) throw w.error;
    generation = w.metadata.generation;
  }
  await got.lock.release();
  await store.close();
  const ours = folderBytes(path.join(repoRoot, "ai_plan", "meta"));
  return [row(`bytes after close: ${N.steps.toLocaleString("en")} writeMetadata of a 10 KB state, 200 B changed each (fs)`, "budget 1 MiB", ours, MiB, "≤ 1.0×", 1, "bytes")];
}

async function resumes(): Promise<BenchRow[]> {
  const repoRoot = tempDir("history-resumes");
  const store = createFsPlanStore({ repoRoot });
  const times: number[] = [];
  for (let i = 0; i < N.resumes; i++) {
    const t0 = process.hrtime.bigint();
    const got = await store.lock("r", { owner: { tool: "bench" } });
    times.push(Number(process.hrtime.bigint() - t0));
    if (!got.ok) throw got.error;
    await got.lock.release();
  }
  await store.close();
  const files = readdirSync(path.join(repoRoot, "ai_plan", "r", "runlog")).length;
  const first = median(times.slice(0, 20));
  const last = median(times.slice(-20));
  return [
    row(`files in runlog/ after ${N.resumes.toLocaleString("en")} acquisitions that wrote nothing`, "budget 8 files", files, 8, "≤ 1.0×", 1, "count"),
    row(`lock + claim at acquisition ${N.resumes.toLocaleString("en")} (median of the last 20)`, "the same at the first 20", last, first, "≤ 1.2×", 1.2),
  ];
}

function rss(args: string[]): number {
  const out = execFileSync(process.execPath, ["--import", "tsx", "--conditions=@phasekit/source", RSS_CHILD, ...args], { cwd: ROOT, encoding: "utf8" });
  return Number(out.trim().split("\n").pop());
}

/** The RSS goal is for 10 KB outputs (the run-log suite's rows use 1 KB). */
async function peakRss(): Promise<BenchRow[]> {
  const runDir = tempDir("history-rss");
  const base = median([rss(["import"]), rss(["import"]), rss(["import"])]);
  const run = rss(["run", runDir, String(N.rssSteps), "10000"]);
  const load = rss(["load", runDir]);
  const steps = N.rssSteps.toLocaleString("en");
  return [
    row(`peak RSS above import-only: a ${steps}-step run, 10 KB outputs`, "budget 64 MiB", run - base, 64 * MiB, "≤ 1.0×", 1, "bytes"),
    row(`peak RSS above import-only: loading it`, "budget 64 MiB", load - base, 64 * MiB, "≤ 1.0×", 1, "bytes"),
  ];
}

export const suite: BenchSuite = {
  title: "One history per run (issue 17)",
  description:
    "Bytes a run folder holds after close when each step's output (or each metadata write) changes ~200 B of a 10 KB value, against the 1 MiB budget (SqliteSaver with the same values for scale); files and lock+claim time after many acquisitions that wrote nothing; peak RSS of a run with 10 KB outputs and of loading it. Subject and baseline are measured in the same run.",
  run: async () => [...(await outputBytes()), ...(await metadataBytes()), ...(await resumes()), ...(await peakRss())],
};
