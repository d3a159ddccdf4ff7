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
import { fingerprint, fingerprintOfCanonical } from "../src/engine/fingerprint.js";
import { watchOpenName } from "../src/io/open-name.js";
import { encodeLine } from "../src/store/run-log/format.js";
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

/** The 10 KB output of step i of the hit rows: one of its 91 fields changed (~100 B), as successive outputs differ. */
function changed10k(big: Record<string, string>, i: number): Record<string, string> {
  return { ...big, [`k${String(i % 91).padStart(4, "0")}`]: `${i}-`.padEnd(100, "y") };
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
    "Miss (first run): a fresh step id per call whose fn returns a 10 KB object (control check, input fingerprint, `started` line unsynced, `done` line with the output inline, one fdatasync, fence; workflow.json is not written). Raw: the same number of bytes appended to an open fd + fdatasync. SqliteSaver: put of a checkpoint holding the same object, synchronous=FULL, after 1,000 puts (its WAL in its steady state). Floor: what a miss's guarantees make it do, with no engine (the control looks, the input's fingerprint, the `started` line, the segment's name, the value work, the `done` line and its sync, the fence). The miss's contenders are interleaved round by round (60 rounds × 20); its times are medians of round means and its ratios the median of the per-round ratios. Hit (a second run of the same folder, resumed): the completed steps called again in order with the same inputs (control check, input fingerprint, index lookup, one positioned read, output check, JSON.parse): steps with a small output, and steps with a 10 KB output (one ~100 B field changed from the step before, so stored as deltas, the resume's order: one delta applied per hit). Direct: calling the step's function.",
  notes: [
    "**The miss against 1.5× raw: met on a quiet machine in every run since the segment is written in place (1.11–1.22× in the nine runs of the session that made it, 1.04–1.17× in the six of the next, 0.93–1.11× in the five quiet runs of the latest session (the table is the last); in that session two runs beside another engineer's test runs, load average 3–4, read 1.21× and 1.51×).** A segment now writes its records into zero-filled room it already holds (docs/decisions.md, D14 \"Room\"): an fdatasync after a write in place commits no size change. Measured alone on this disk, 10 KB synced in place took 85–108 µs against 192–231 µs appended. Inside the run log, the first readings gained less than that: the holder stat'ed its segment twice a step to check its name, and on this kernel a stat makes the next write stamp the file anew, so every sync also wrote the segment's inode (ext4 here runs without a journal; perf showed `ext4_write_inode` in every run-log sync). The name is now checked through `/proc/self/fd` without a stat (io/open-name.ts): the run log's own sync went from 133–147 µs to 97–103 µs in one process. The floor (what a miss must do on its value and the file system, with no engine) is written the same way and reads 0.71–0.81× raw. Before this session: 1.23–1.69× raw over 20 runs, 4 of them above 1.5×; the code from before this session, run alternately with this one on the same machine, read 1.51–1.79× raw (this code 1.11–1.22×), its miss 354–369 µs against 257–314 µs.",
    "**The miss against SqliteSaver.put (not met): 1.26–1.33× in the five runs on a quiet machine in the latest session (the table is the last), 1.36–1.40× in the six of the session before (1.35–1.45× in the nine before that).** In the latest session, fourteen layers of `async` functions awaited around the floor cost it 0–6 µs a step with real syncs (4 µs with syncs stubbed out), so a synchronous path through `ctx.step`, proposed before, would not close the gap either. The floor now holds everything a miss's guarantees make it do, with no engine around it: the two control-request looks, the input's fingerprint, the `started` line written before the body (the floor left it out before), the segment's name before the body, the value work (the strict canonical encoding with its copy, sha256, the delta), the `done` line written into room and its fdatasync, and the fence (a readdir, the name again). It reads 0.93–0.98× the saver: the goal would hold only if the engine's work around those calls cost at most 2–7% of them, and it costs 47–52% (the miss reads 1.47–1.52× its floor). Measured layer by layer in one process (a scratch probe, 60 rounds × 20, interleaved; its floor without the `started` line): floor 186 µs, the run log's own step 219 µs, ctx.step 293 µs; with fdatasync stubbed out 74, 78 and 104 µs. The run log adds the `started` line and little else; runWorkflow's step adds 26 µs of CPU (the garbage collector's share, about 12 µs a step, for what each step keeps: its index entry, its report and the output base; the two control-request looks, 7 µs; the run context's step flow: key, caps, retries, the step's signal, the reporter). With a real sync each of those layers costs about 2.5× its CPU time: on this 2-vCPU virtual machine the code a step runs after sleeping in the disk's flush runs about twice as slow as the same code run back to back, and the sync itself reads 11–13 µs longer per layer. So no change to one part closes the gap; the saver's put spends ~120 µs in compiled SQLite (a bare better-sqlite3 insert of the same 10 KB, WAL, synchronous=FULL: 117–135 µs) and ~70 µs in LangGraph's JavaScript.",
    "**Hit.** A hit is the control check, the input fingerprint (once: `ctx.step` computes it and the store records it), an index lookup, one positioned read, the output's sha256 check and JSON.parse: 18–20 µs with a small output (24–40 µs in earlier sessions). The run log's own hit is 6–10 µs.",
    "**Hit with a 10 KB output (met, with little room): 45–49 µs in five runs on a quiet machine, 0.91–0.97× of the 50 µs budget; 45–50 µs under load.** This row is new: the rows before measured the hit on a small output only. The outputs here are stored as deltas (each one field off the one before), and the hits come in order, as in a resume: to the small hit's work it adds reading the delta line, applying it on the output checked last, writing the result with `JSON.stringify` (about 8 µs for these 10 KB on this machine: the whole output is encoded to be checked) and hashing it (sha256, about 5 µs), and a `JSON.parse` for the copy handed out (about 5 µs). Tried and not kept: a delta line that carries a hash of its own bytes, so that a hit in order checks the ~100 B delta instead of the whole output and hands out a copy of the applied value. It read 28–32 µs in a scratch probe, but the 10,000-step run's peak RSS rose by about 15 MiB (medians of five interleaved runs each: 154 → 169 MiB absolute), which takes that goal past its 64 MiB budget; about 4 MiB of it comes from the longer lines alone (a 30-byte pad in the same place: 158 MiB), the rest from the garbage collector's sizing (not from what is kept: the heap after a full collection grew by 1 MiB).",
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
    // The floor of a miss with phasekit's guarantees and no engine, in the order a miss does them: its file-system
    // looks (two control-request lstats, the segment's own name before the body), the input's fingerprint, the
    // `started` line written before the body (unsynced: a killed process leaves it, so the attempt is counted), the
    // work every miss must do on its value (the strict check with the canonical encoding and its own copy in one
    // walk, sha256, the delta on the last output), the `done` line's write + fdatasync, then a readdir and the name
    // again (the fence).
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
    let floorStep = 0;
    const small = (): { n: number } => ({ n: 1 });
    // Every hit call of the second run needs a step completed by the first (ids repeat only across runs).
    const hits = (N.rounds + 1) * N.batch + 20;
    const options = { repoRoot, target: "bench-step", toolName: "bench", maxSteps: Number.MAX_SAFE_INTEGER, createReporter: () => quiet };
    const first = await runWorkflow(options, async (ctx): Promise<BenchRow[]> => {
      for (let i = 0; i < hits; i++) await ctx.step(`hit-${i}`, { i }, small);
      for (let i = 0; i < hits; i++) await ctx.step(`hit10k-${i}`, { i }, () => changed10k(big, i));
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
            const inFp = fingerprint({ i: floorStep });
            floorFile.write(encodeLine({ t: "start", e: 1, k: `miss-${floorStep++}`, in: inFp, a: 1, at: Date.now() }), false);
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
        row("the miss's floor: its records, sync, checks and value work, no engine", "raw append + fdatasync of the same bytes", m.floor as number, m.raw as number, "report", undefined, ratio("floor", "raw")),
        row("ctx.step miss, 10 KB output", "the miss's floor (above)", m.miss as number, m.floor as number, "report", undefined, ratio("miss", "floor")),
      ];
    });
    closeSync(fd);
    closeSync(floorFd);
    saver.db.close();
    if (first.status !== "completed") throw new Error(`bench run ended ${first.status}`);
    const second = await runWorkflow({ ...options, reenter: true }, async (ctx): Promise<BenchRow[]> => {
      let hit = 0;
      let hit10k = 0;
      const ran = (id: string) => (): never => {
        throw new Error(`bench: step ${id} ran instead of being reused`);
      };
      const m = await interleaved(
        {
          hit: async () => {
            const i = hit++;
            return ctx.step(`hit-${i}`, { i }, ran(`hit-${i}`));
          },
          hit10k: async () => {
            const i = hit10k++;
            return ctx.step(`hit10k-${i}`, { i }, ran(`hit10k-${i}`));
          },
          direct: () => small(),
        },
        N,
      );
      return [
        row("ctx.step reuse hit, 10 KB output", "budget 50 µs", m.hit10k as number, 50_000, "≤ 1.0×", 1.0),
        row("ctx.step reuse hit, small output", "budget 50 µs", m.hit as number, 50_000, "≤ 1.0×", 1.0),
        row("ctx.step reuse hit, small output", "direct call", m.hit as number, m.direct as number, "report"),
      ];
    });
    if (second.status !== "completed") throw new Error(`bench run ended ${second.status}`);
    return [...first.result, ...second.result];
  },
};
