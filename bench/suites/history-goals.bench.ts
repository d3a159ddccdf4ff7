/**
 * The goals of "one run, one history" (issue 17) that the run-log suite does not cover: bytes a run leaves
 * after close when its outputs (or its metadata) change a little each step, and what 1,000 lock acquisitions
 * leave behind. `BENCH_SMOKE=1` (and CI) shrink every count so the suite only proves it runs.
 */
import { readdirSync } from "node:fs";
import path from "node:path";
import { createFsPlanStore, createReporter, runWorkflow } from "@phasekit/adapters-pi";
import { openRunLog } from "@phasekit/adapters-pi/plan-folder";
import { goalRow, type BenchRow, type BenchSuite } from "../harness.js";
import { peakRssRows } from "./peak-rss.js";
import { checkpointOf, folderBytes, jsonOfSize, sqliteSaver, tempDir } from "./contenders.js";
import { interleaved, median, SMOKE } from "./interleave.js";

const N = SMOKE ? { steps: 50, resumes: 30, rssSteps: 200, rounds: 3, batch: 20 } : { steps: 1_000, resumes: 1_000, rssSteps: 10_000, rounds: 40, batch: 100 };
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
  await runWorkflow({ repoRoot, target: "out", toolName: "bench", createReporter: () => createReporter({ onChange: () => undefined }) }, async (ctx) => {
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
  const scale: BenchRow = { subject: label, baseline: "SqliteSaver, same values", subjectNs: ours, baselineNs: folderBytes(sqliteDir), goal: "report", unit: "bytes" };
  return [row(label, "budget 1 MiB", ours, MiB, "≤ 1.0×", 1, "bytes"), scale];
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

/** `N.resumes` acquisitions of one run, each writing nothing or one metadata generation; files left and lock+claim times. */
async function acquisitions(write: boolean): Promise<{ files: number; first: number; last: number }> {
  const repoRoot = tempDir("history-resumes");
  const store = createFsPlanStore({ repoRoot });
  const times: number[] = [];
  let generation: number | null = null;
  const at = new Date(0).toISOString();
  for (let i = 0; i < N.resumes; i++) {
    const t0 = process.hrtime.bigint();
    const got = await store.lock("r", { owner: { tool: "bench" } });
    times.push(Number(process.hrtime.bigint() - t0));
    if (!got.ok) throw got.error;
    if (write) {
      const w = await (got.lock.store ?? store).writeMetadata("r", { slug: "r", ownerTool: "bench", currentTool: "bench", status: "running", createdAt: at, updatedAt: at, state: { resume: i } }, generation);
      if (!w.ok) throw w.error;
      generation = w.metadata.generation;
    }
    await got.lock.release();
  }
  await store.close();
  return { files: readdirSync(path.join(repoRoot, "ai_plan", "r", "runlog")).length, first: median(times.slice(0, 20)), last: median(times.slice(-20)) };
}

async function resumes(): Promise<BenchRow[]> {
  const n = N.resumes.toLocaleString("en");
  const rows: BenchRow[] = [];
  for (const write of [false, true]) {
    const r = await acquisitions(write);
    const what = write ? "that wrote one metadata generation each" : "that wrote nothing";
    rows.push(row(`files in runlog/ after ${n} acquisitions ${what}`, "budget 8 files", r.files, 8, "≤ 1.0×", 1, "count"));
    rows.push(row(`lock + claim at acquisition ${n}, ${write ? "writing" : "empty"} (median of the last 20)`, "the same at the first 20", r.last, r.first, "≤ 1.2×", 1.2));
  }
  return rows;
}

/**
 * Reuse hits of outputs stored as deltas (docs/decisions.md D16): in order (a resume: one delta on the output
 * materialized last), against the same hits on 10 KB outputs stored whole, and out of order (a walk back to the
 * nearest full value, up to 32 deltas).
 */
async function deltaHits(): Promise<BenchRow[]> {
  const never = (): never => {
    throw new Error("bench: a step that should be reused ran");
  };
  const build = async (out: (i: number) => Record<string, string>) => {
    const runDir = tempDir("history-hit");
    const a = await openRunLog({ runDir });
    for (let i = 0; i < N.steps; i++) await a.step(`s${i}`, { i }, () => out(i));
    await a.close();
    return openRunLog({ runDir });
  };
  const deltas = await build(changing());
  const whole = await build((i) => jsonOfSize(10_000, i));
  const order = Array.from({ length: N.steps }, (_, x) => (x * 7919) % N.steps);
  let d = 0;
  let w = 0;
  let r = 0;
  const hit = (log: typeof deltas, k: number) => log.step(`s${k}`, { i: k }, never);
  const m = await interleaved(
    { inOrder: () => hit(deltas, d++ % N.steps), whole: () => hit(whole, w++ % N.steps), random: () => hit(deltas, order[r++ % N.steps] as number) },
    { rounds: N.rounds, batch: N.batch },
  );
  await deltas.close();
  await whole.close();
  const label = "run log reuse hit, 10 KB output stored as a delta";
  return [
    row(`${label}, in order (a resume)`, "budget 50 µs", m.inOrder as number, 50_000, "≤ 1.0×", 1),
    { subject: `${label}, in order (a resume)`, baseline: "the same hit, 10 KB outputs stored whole", subjectNs: m.inOrder as number, baselineNs: m.whole as number, goal: "report" },
    { subject: `${label}, random order (up to 32 deltas)`, baseline: "budget 50 µs", subjectNs: m.random as number, baselineNs: 50_000, goal: "report" },
  ];
}

async function peakRss(): Promise<BenchRow[]> {
  const run = `a ${N.rssSteps.toLocaleString("en")}-step run, 10 KB outputs`;
  return peakRssRows(N.rssSteps, 10_000, run, `${run} each unlike the one before (stored whole)`);
}

export const suite: BenchSuite = {
  title: "One history per run",
  description:
    "Bytes a run folder holds after close when each step's output (or each metadata write) changes ~200 B of a 10 KB value, against the 1 MiB budget (SqliteSaver with the same values for scale); files and lock+claim time after many acquisitions that wrote nothing; peak RSS of a run with 10 KB outputs and of loading it. Subject and baseline are measured in the same run.",
  notes: [
    "**Where a goal is missed, and why (measured).** Every goal of this suite is met in the run above (load average about 2 on this 2-core machine; times vary 2× between runs when it is shared). Lock + claim at acquisition 1,000 when nothing was written (0.71× above) compares two medians taken at different moments of the run, not interleaved: it read 0.67–1.48× in this session's four runs, and 0.20–0.84× in three runs of the commit before the engine's step flow (4eb4904) alternated with them; no step takes part in it. Its time itself was 0.93–1.63 ms in those four runs and 0.58–1.08 ms in the three before; measured apart (a scratch loop of 300 empty acquisitions, the median past the 20th, four runs of each version alternated) it was the same before and after: 0.95–1.05 ms here, 1.04–1.20 ms before.",
    "- *Bytes of changing step outputs (met: 9.90 MiB before, 0.89 MiB now).* Step outputs are stored as deltas on the output before them (docs/decisions.md D16): a `done` line with `\"d\":1` holds `[back, length, baseIsDelta, ops]`, with the states' delta rule (a delta only when under half the value) and a full value every 32 outputs. Of the 911 KiB, the segment's start and done headers (input and output fingerprints, times) are 41%, the 31 full values 34% and the 969 deltas (~240 B each) 25%. Content-defined chunks were sized at ~1.3 MiB on this pattern and not built.",
    "- *Reuse hit of an output stored as a delta.* In order (a resume) a hit applies one delta on the output materialized last, then checks the whole value's sha256 and parses it for the caller: the extra over a whole output is the delta, writing the value back to text for the check, and the read of the small delta line; inside the 50 µs budget (28 and 33 µs in two earlier runs, against 16 and 20 µs for outputs stored whole; 31–37 µs in this session's four runs, and 32–40 µs for the commit before the engine's step flow in three runs alternated with them). Out of order it walks back to the nearest full value (up to 32 deltas, each container copied once for the whole chain, one read of the 64 KiB before the first base: 15% less CPU than a read per link): 61 and 88 µs in two runs, reported, not a goal; a smaller keyframe interval trades it against bytes (every 16: about 1.2 MiB, over the byte budget).",
    "- *Peak RSS of a 10,000 × 10 KB run (met: +80–125 MiB before; +49.5 and +52.5 MiB in two runs now, +41.7 and +53.0 MiB when every output is unlike the one before and stored whole).* Measured with process.memoryUsage and --trace-gc at every fs boundary of the close: the peak was the compaction's planning, where `planSnapshot` re-encoded every index line in each round of its offset fixpoint (three rounds of 10,000 lines and header objects, promoted to the old space before a full collection: +30 MB at the peak), and where every output was read into a fresh buffer to be checked. Now each header is encoded once and the index written into one buffer, outputs stored whole are checked in one reused buffer and copied into one reused 1 MiB write batch, and deltas are kept as text. What remains above the import-only process is the run's index (one entry per step) and V8's young generation grown by the run's garbage (each step allocates its output, its canonical text and, for the delta, a parsed copy).",
    "- *Lock + claim at acquisition 1,000, writing (met: 0.89× in the run above, 0.57× and 1.01× in earlier ones).* Every fold carries every metadata generation forward (the journal is rendered from them, D17). Kept as lines, they made each claim parse one header per generation: 1.57× at generation 1,000 against 20, in a same-process comparison (`/tmp` scratch, 40 claims of each, interleaved). A snapshot now keeps the records before the latest full state in one archive value (`run-log/archive.ts`), read only when the journal or events are asked for: the same comparison gave 0.95× and 1.11×.",
  ],
  run: async () => [...(await outputBytes()), ...(await deltaHits()), ...(await metadataBytes()), ...(await resumes()), ...(await peakRss())],
};
