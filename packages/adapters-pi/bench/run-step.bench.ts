/**
 * `ctx.step` inside a real runWorkflow, side by side with its floor: a miss with a 10 KB output vs appending the
 * same bytes to an open file + fdatasync (what one durable step cannot go below), and a reuse hit vs a direct
 * call. Contenders are interleaved round by round (bench/suites/interleave.ts).
 */
import { closeSync, fdatasyncSync, lstatSync, mkdirSync, mkdtempSync, openSync, readdirSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { BenchRow, BenchSuite } from "../../../bench/harness.js";
import { checkpointOf, steadySqliteSaver } from "../../../bench/suites/contenders.js";
import { interleaved, interleavedRounds, SMOKE } from "../../../bench/suites/interleave.js";
import { encodeCanonicalCopy } from "../src/io/canonical-copy.js";
import type { JsonValue } from "../src/io/plain-json.js";
import { fingerprintOfCanonical } from "../src/engine/fingerprint.js";
import { watchOpenName } from "../src/io/open-name.js";
import { SegmentFile } from "../src/store/run-log/segment-file.js";
import { smallDelta } from "../src/store/run-log/state-delta.js";
import { createReporter } from "../src/run/reporter.js";
import { runWorkflow } from "../src/run/run-workflow.js";

const N = SMOKE ? { rounds: 3, batch: 3 } : { rounds: 15, batch: 20 };
// The miss is timed over more rounds: its flush and raw's swing with the disk's other work, and each round's ratio
// compares the two under the same swing (the ratios reported are medians of per-round ratios).
const MISS = SMOKE ? N : { rounds: 60, batch: 20 };

function output10k(): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i < 91; i++) out[`k${String(i).padStart(4, "0")}`] = `${i}-`.padEnd(100, "x");
  return out;
}

const row = (subject: string, baseline: string, s: number, b: number, goal: string, limit?: number, ratio = s / b): BenchRow => ({
  subject,
  baseline,
  subjectNs: s,
  baselineNs: b,
  ratio,
  goal,
  ...(limit === undefined ? {} : { met: ratio <= limit }),
});

export const suite: BenchSuite = {
  title: "runWorkflow ctx.step: miss and reuse hit against their floors",
  description:
    "Miss (first run): a fresh step id per call whose fn returns a 10 KB object (control check, input fingerprint, `started` line unsynced, `done` line with the output inline, one fdatasync, fence; workflow.json is not written). Raw: the same number of bytes appended to an open fd + fdatasync. SqliteSaver: put of a checkpoint holding the same object, synchronous=FULL, after 1,000 puts (its WAL in its steady state). Floor: raw plus what a miss must do on its value and the file system, with no engine. The miss's contenders are interleaved round by round (60 rounds × 20); its times are medians of round means and its ratios the median of the per-round ratios. Hit (a second run of the same folder, resumed): the completed steps called again in order with the same inputs (control check, input fingerprint, index lookup, one positioned read, output check, JSON.parse). Direct: calling the step's function.",
  notes: [
    "**The miss against 1.5× raw (not met on every run).** This session ran this suite 20 times (60 rounds of 20, median of the per-round ratios). The miss read 1.23–1.69× raw, and 16 of the 20 runs were at or under 1.5×. The code from before this session, measured the same way in runs alternated with these, read 1.56–1.64×. The ratio follows the disk's flush time more than our work. Raw's fdatasync took 163–268 µs across runs, while the miss's own work stays near 100 µs above its floor. The miss met 1.5× in every run where raw took 200 µs or more, and in only some of those where the disk flushed faster (163–198 µs). The floor is everything a miss must do on its value and the file system, in one synchronous function with no engine. It reads 0.84–1.20× raw, and the miss reads 1.37–1.54× the floor. Work this session took out of the step path: the attempt cap is decided inside the store's flow, so the record is read once; the record view is built only when read; one listener on the lock's signal serves all steps, and the stop watch keeps one timer across steps; the listing fence before the body is skipped while the lock's heartbeat vouches for the holder (the segment's own name is still checked, and the fence after the sync still lists); one walk gives the output's canonical text and the delta chain's base copy, where an encode and a parse did; values the port or the body give at once are not awaited. Meeting 1.5× on a fast-flushing disk would need the miss's own work near 85 µs.",
    "**The miss against SqliteSaver.put (not met): 1.44–1.56×.** The saver is timed in its steady state (after 1,000 puts), where SQLite rewrites its grown write-ahead log in place: its fsync carries no size change, and it costs less than the append + fdatasync this suite calls raw (176–211 µs per 10 KB put against 163–268 µs for raw). Our miss appends, and pays the file system's journal commit that every append's fdatasync does. To meet this goal, the segment would need preallocated, zero-filled room that readers stop at, as SQLite's and PostgreSQL's logs have. That changes the run log's format; it is proposed, not made (see the run-log goals section).",
    "**Hit.** A hit is the control check, the input fingerprint (once: `ctx.step` computes it and the store records it), an index lookup, one positioned read, the output's sha256 check and JSON.parse: 17–19 µs in this session's runs (24–40 µs in earlier sessions). The run log's own hit is 6–10 µs.",
  ],
  async run() {
    const repoRoot = mkdtempSync(path.join(tmpdir(), "phasekit-bench-step-"));
    const quiet = createReporter({ headless: true, stream: { write: () => true } });
    const big = output10k();
    const line = Buffer.from(`${JSON.stringify({ t: "done", e: 1, k: "miss-0", in: "x".repeat(74), a: 1, ofp: "x".repeat(74) })}\t${JSON.stringify(big)}\n`);
    const fd = openSync(path.join(repoRoot, "raw.log"), "a");
    // LangGraph's SqliteSaver putting a checkpoint that holds the same object (WAL, synchronous=FULL).
    const saver = await steadySqliteSaver(mkdtempSync(path.join(tmpdir(), "phasekit-bench-step-sqlite-")), big, SMOKE ? 5 : 1_000);
    let put = 0;
    // The floor of a miss with phasekit's guarantees and no engine: its record's write + fdatasync, plus the work every
    // miss must do on its value (the strict check with the canonical encoding and its own copy in one walk, sha256,
    // the delta on the last output) and its file-system looks (two control-request lstats, the segment's own name
    // before the body, a readdir and the name again after the sync), in the order a miss does them.
    const floorDir = path.join(repoRoot, "floor");
    mkdirSync(path.join(floorDir, "runlog"), { recursive: true });
    const floorSeg = path.join(floorDir, "runlog", "0000000001.log");
    // Written as a segment is: into the zero-filled room its durable records write after themselves.
    const floorFd = openSync(floorSeg, "wx+");
    const floorFile = new SegmentFile(floorFd, floorSeg, 0, () => undefined);
    const absent = (name: string): void => void lstatSync(path.join(floorDir, name), { throwIfNoEntry: false });
    // The segment's name is checked as the holder checks it: without a stat of the file where io/open-name.ts can.
    const named = watchOpenName(floorFd, floorSeg) ?? (() => lstatSync(floorSeg).isFile());
    const fence = (): void => {
      readdirSync(path.join(floorDir, "runlog"));
      named();
    };
    let floorBase = JSON.parse(JSON.stringify(big)) as JsonValue;
    const small = (): { n: number } => ({ n: 1 });
    // Every hit call of the second run needs a step completed by the first (ids repeat only across runs).
    const hits = (N.rounds + 1) * N.batch + 20;
    const options = { repoRoot, target: "bench-step", toolName: "bench", maxSteps: Number.MAX_SAFE_INTEGER, createReporter: () => quiet };
    const first = await runWorkflow(options, async (ctx): Promise<BenchRow[]> => {
      for (let i = 0; i < hits; i++) await ctx.step(`hit-${i}`, { i }, small);
      let miss = 0;
      const { ns: m, ratio } = await interleavedRounds(
        {
          miss: () => ctx.step(`miss-${miss++}`, { i: miss }, () => big),
          raw: () => {
            writeSync(fd, line);
            fdatasyncSync(fd);
          },
          sqlite: () => {
            const c = checkpointOf("miss", put++, big);
            return saver.put(c.config, c.checkpoint, c.metadata);
          },
          floor: () => {
            absent("stop-request.json");
            absent("pause-request.json");
            named();
            const { text, copy } = encodeCanonicalCopy(big);
            const ofp = fingerprintOfCanonical(text);
            const delta = smallDelta(floorBase, copy, text.length) ?? text;
            floorBase = copy;
            floorFile.write(Buffer.from(`${ofp}\t${delta}\n`), true);
            fdatasyncSync(floorFd);
            fence();
          },
        },
        MISS,
      );
      return [
        row("ctx.step miss, 10 KB output", "raw append + fdatasync of the same bytes", m.miss as number, m.raw as number, "≤ 1.5×", 1.5, ratio("miss", "raw")),
        row("ctx.step miss, 10 KB output", "SqliteSaver.put, synchronous=FULL", m.miss as number, m.sqlite as number, "≤ 1.0×", 1.0, ratio("miss", "sqlite")),
        row("the miss's floor: raw + its value work and fences, no engine", "raw append + fdatasync of the same bytes", m.floor as number, m.raw as number, "report", undefined, ratio("floor", "raw")),
        row("ctx.step miss, 10 KB output", "the miss's floor (above)", m.miss as number, m.floor as number, "report", undefined, ratio("miss", "floor")),
      ];
    });
    closeSync(fd);
    closeSync(floorFd);
    saver.db.close();
    if (first.status !== "completed") throw new Error(`bench run ended ${first.status}`);
    const second = await runWorkflow({ ...options, reenter: true }, async (ctx): Promise<BenchRow[]> => {
      let hit = 0;
      const m = await interleaved(
        {
          hit: async () => {
            const i = hit++;
            const r = await ctx.step(`hit-${i}`, { i }, () => {
              throw new Error(`bench: step hit-${i} ran instead of being reused`);
            });
            return r;
          },
          direct: () => small(),
        },
        N,
      );
      return [
        row("ctx.step reuse hit, small output", "budget 50 µs", m.hit as number, 50_000, "≤ 1.0×", 1.0),
        row("ctx.step reuse hit, small output", "direct call", m.hit as number, m.direct as number, "report"),
      ];
    });
    if (second.status !== "completed") throw new Error(`bench run ended ${second.status}`);
    return [...first.result, ...second.result];
  },
};
