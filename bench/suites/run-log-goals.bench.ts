/**
 * The goals of the fenced run log (issue 11), each measured side by side with its peer in one run: the raw
 * floor (append + fdatasync) and LangGraph's SqliteSaver (synchronous=FULL). `BENCH_SMOKE=1` (and CI) shrink
 * every count so the suite only proves it runs.
 */
import { cpSync } from "node:fs";
import { createHash } from "node:crypto";
import path from "node:path";
import { canonicalJson, fingerprint } from "@phasekit/adapters-pi/store-kit";
import { openRunLog, type RunLog } from "@phasekit/adapters-pi/plan-folder";
import { goalRow, type BenchRow, type BenchSuite } from "../harness.js";
import { peakRssRows } from "./peak-rss.js";
import { checkpointOf, folderBytes, jsonOfSize, rawAppender, sqliteSaver, steadySqliteSaver, tempDir } from "./contenders.js";
import { interleaved, median, SMOKE } from "./interleave.js";

const N = SMOKE
  ? { rounds: 3, batch: 3, resumeSteps: 200, resumeRounds: 3, firstRounds: 2, states: 50, rssSteps: 200, fpRounds: 3 }
  : { rounds: 15, batch: 20, resumeSteps: 10_000, resumeRounds: 15, firstRounds: 7, states: 1_000, rssSteps: 10_000, fpRounds: 15 };
const MiB = 1024 * 1024;
const never = (): never => {
  throw new Error("bench: a step that should be reused ran");
};

const row = goalRow;

async function stepMiss(): Promise<BenchRow[]> {
  const log = await openRunLog({ runDir: tempDir("miss") });
  const raw = rawAppender(tempDir("raw"));
  const output = jsonOfSize(10_000);
  const saver = await steadySqliteSaver(tempDir("sqlite"), output, SMOKE ? 5 : 1_000);
  const line = Buffer.from(`${JSON.stringify({ t: "done", k: "k", in: "x".repeat(74), ofp: "x".repeat(74) })}\t${JSON.stringify(output)}\n`);
  let i = 0;
  let j = 0;
  const m = await interleaved(
    {
      runLog: () => log.step(`m${i++}`, { i }, () => output),
      raw: () => raw.append(line),
      sqlite: () => {
        const c = checkpointOf("miss", j++, output);
        return saver.put(c.config, c.checkpoint, c.metadata);
      },
    },
    N,
  );
  await log.close();
  raw.close();
  saver.db.close();
  return [
    row("run log step miss, 10 KB output", "raw append + fdatasync of the same bytes", m.runLog as number, m.raw as number, "≤ 1.5×", 1.5),
    row("run log step miss, 10 KB output", "SqliteSaver.put, synchronous=FULL", m.runLog as number, m.sqlite as number, "≤ 1.0×", 1.0),
  ];
}

async function reuseHit(): Promise<BenchRow[]> {
  const log = await openRunLog({ runDir: tempDir("hit") });
  const saver = sqliteSaver(tempDir("sqlite-hit"));
  const K = 200;
  for (let i = 0; i < K; i++) {
    await log.step(`h${i}`, { i }, () => jsonOfSize(1_000, i));
    const c = checkpointOf("hit", i, jsonOfSize(1_000, i));
    await saver.put(c.config, c.checkpoint, c.metadata);
  }
  let i = 0;
  let j = 0;
  const m = await interleaved(
    {
      runLog: () => {
        const k = i++ % K;
        return log.step(`h${k}`, { i: k }, never);
      },
      sqlite: () => saver.getTuple({ configurable: { ...checkpointOf("hit", j++ % K, null).config.configurable, checkpoint_id: checkpointOf("hit", (j - 1) % K, null).checkpoint.id } }),
    },
    { ...N, batch: N.batch * 10 },
  );
  await log.close();
  saver.db.close();
  return [
    row("run log reuse hit, 1 KB output", "SqliteSaver.getTuple", m.runLog as number, m.sqlite as number, "≤ 0.2×", 0.2),
    row("run log reuse hit, 1 KB output", "budget 50 µs", m.runLog as number, 50_000, "≤ 1.0×", 1.0),
  ];
}

async function filled(steps: number): Promise<string> {
  const runDir = tempDir(`resume-${steps}`);
  const log = await openRunLog({ runDir });
  // Parallel batches share syncs (group commit), so building 10,000 steps takes seconds, not minutes.
  for (let i = 0; i < steps; i += 100) {
    await Promise.all(Array.from({ length: Math.min(100, steps - i) }, (_, k) => log.step(`s${i + k}`, { i: i + k }, () => jsonOfSize(1_000, i + k))));
  }
  await log.close();
  return runDir;
}

async function resume(): Promise<BenchRow[]> {
  const big = await filled(N.resumeSteps);
  const small = await filled(10);
  const open = async (runDir: string): Promise<void> => {
    const log: RunLog = await openRunLog({ runDir });
    await log.step("s0", { i: 0 }, never);
    await log.close();
  };
  // The first open after the run closed (its segment still holds every record, then the base of the
  // compaction at close): each round opens a fresh copy of the folder, so no earlier open helped it.
  const copies = (dir: string): string[] => Array.from({ length: N.firstRounds }, () => {
    const to = path.join(tempDir("resume-copy"), "run");
    cpSync(dir, to, { recursive: true });
    return to;
  });
  const bigCopies = copies(big);
  const smallCopies = copies(small);
  const firstBig: number[] = [];
  const firstSmall: number[] = [];
  for (let r = 0; r < N.firstRounds; r++) {
    for (const [dir, out] of r % 2 === 0 ? ([[bigCopies[r], firstBig], [smallCopies[r], firstSmall]] as const) : ([[smallCopies[r], firstSmall], [bigCopies[r], firstBig]] as const)) {
      const t0 = process.hrtime.bigint();
      await open(dir as string);
      out.push(Number(process.hrtime.bigint() - t0));
    }
  }
  const m = await interleaved({ big: () => open(big), small: () => open(small) }, { rounds: N.resumeRounds, batch: 1, warmup: 2 });
  return [
    row(`first resume after the run closed, ${N.resumeSteps.toLocaleString("en")} steps`, "the same for 10 steps", median(firstBig), median(firstSmall), "≤ 2×", 2),
    row(`resume (open + first hit) of ${N.resumeSteps.toLocaleString("en")} steps, 1 KB outputs`, "the same for 10 steps", m.big as number, m.small as number, "≤ 2×", 2),
    row(`resume (open + first hit) of ${N.resumeSteps.toLocaleString("en")} steps, 1 KB outputs`, "budget 20 ms", m.big as number, 20e6, "≤ 1.0×", 1),
  ];
}

/** The fingerprint rows alone (exported so they can be run by themselves; see docs/benchmarks.md). */
export async function fingerprints(): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  const sha = (text: string): string => createHash("sha256").update(text).digest("hex");
  for (const [label, size] of [["1 KB", 1_000], ["100 KB", 100_000], ["1 MB", 1_000_000]] as const) {
    const value = nested(size);
    const sorted = JSON.parse(canonicalJson(value)) as unknown;
    // The floor for any encoder that lets the engine write the text: the canonical bytes with no check at all.
    const keys = [...new Set(JSON.stringify(value).match(/"[a-z]+":/g))].map((k) => k.slice(1, -2)).sort();
    const m = await interleaved(
      {
        fingerprint: () => fingerprint(value),
        stringify: () => sha(JSON.stringify(value)),
        floor: () => sha(JSON.stringify(value, keys)),
        sortedFingerprint: () => fingerprint(sorted),
        sortedStringify: () => sha(JSON.stringify(sorted)),
      },
      { rounds: N.fpRounds, batch: Math.max(2, Math.round(2e6 / size)) },
    );
    const f = m.fingerprint as number;
    rows.push(row(`fingerprint of ${label}`, "JSON.stringify + sha256", f, m.stringify as number, "≤ 1.5×", 1.5));
    rows.push({ subject: `fingerprint of ${label}`, baseline: "canonical bytes without checks (JSON.stringify with sorted key list) + sha256", subjectNs: f, baselineNs: m.floor as number });
    rows.push({ subject: `canonical bytes of ${label} without checks + sha256`, baseline: "JSON.stringify + sha256", subjectNs: m.floor as number, baselineNs: m.stringify as number });
    rows.push(row(`fingerprint of ${label}, keys already sorted`, "JSON.stringify + sha256 of it", m.sortedFingerprint as number, m.sortedStringify as number, "≤ 1.5×", 1.5));
  }
  return rows;
}

/** A state-like value of about `bytes`: records with nested objects, arrays and numbers, keys not in order. */
function nested(bytes: number): unknown {
  const items: unknown[] = [];
  for (let n = 0; JSON.stringify(items).length < bytes; n++) {
    items.push({ name: `item-${n}`, id: n, tags: ["a", `t${n % 7}`], nested: { score: n * 1.5, ok: n % 2 === 0, text: "lorem ipsum dolor" } });
  }
  return { items, meta: { count: items.length } };
}

async function stateBytes(): Promise<BenchRow[]> {
  const logDir = tempDir("states");
  const log = await openRunLog({ runDir: logDir });
  const sqliteDir = tempDir("sqlite-states");
  const saver = sqliteSaver(sqliteDir);
  const state = jsonOfSize(10_000);
  const keys = Object.keys(state);
  for (let i = 0; i < N.states; i++) {
    // ~200 B change per step: two of the ~90 fields get new 100-byte values.
    for (const k of [keys[(i * 2) % keys.length], keys[(i * 2 + 1) % keys.length]]) state[k as string] = `${i}-changed-`.padEnd(100, "c");
    await log.putState({ ...state });
    const c = checkpointOf("states", i, { ...state });
    await saver.put(c.config, c.checkpoint, c.metadata);
  }
  await log.close();
  saver.db.close();
  const ours = folderBytes(path.join(logDir, "runlog"));
  const theirs = folderBytes(sqliteDir);
  const label = `bytes for ${N.states.toLocaleString("en")} × 10 KB states, 200 B changed each`;
  return [
    row(`${label} (run log)`, "budget 1 MiB", ours, MiB, "≤ 1.0×", 1, "bytes"),
    row(`${label} (run log)`, "SqliteSaver, same states", ours, theirs, "≤ 0.1×", 0.1, "bytes"),
  ];
}

async function peakRss(): Promise<BenchRow[]> {
  return peakRssRows(N.rssSteps, 1000, `a ${N.rssSteps.toLocaleString("en")}-step run`);
}

/** Every row of the suite (exported for the smoke test). */
export async function runGoals(): Promise<BenchRow[]> {
  return [...(await stepMiss()), ...(await reuseHit()), ...(await resume()), ...(await fingerprints()), ...(await stateBytes()), ...(await peakRss())];
}

export const suite: BenchSuite = {
  title: "Run log goals",
  description:
    "Contenders interleaved round by round (median over rounds of the per-call time). Step miss: a new step key whose fn returns a 10 KB object (started record unsynced, done record with the output inline, one fdatasync, fence check). Raw: the same line appended to an open fd + fdatasync. SqliteSaver: put of a checkpoint holding the same object, WAL with synchronous=FULL. Hit: one of 200 completed steps (index lookup, one positioned read, fingerprint check, JSON.parse). Resume: claim a new epoch, load the index, reuse the first step, close; first resume: the same on a fresh copy of the run folder just after the run closed (its segment still holds every record before the compaction's base line). Bytes: files of the run log vs the SQLite database. RSS: child processes, peak resident set.",
  notes: [
    "**Where a goal is missed, and why (measured on this 2-core machine shared with other jobs; load average 3–7 during this session's runs, so absolute times vary 2–3× between runs and only same-run ratios mean much).**",
    "- *Step miss.* Both the run log and the raw floor make exactly one fdatasync per step. The run log now writes its records into zero-filled room its segment already holds (docs/decisions.md, D14 \"Room\"), so its sync commits no size change, and it checks its segment's name without a stat of the file (a stat between writes made every sync also write the inode on this disk); raw still appends. Against raw: 0.92–1.00× in this session's runs (1.18–1.46× before). Against SqliteSaver.put: not met, 1.06–1.17× (1.34–1.46× before). The saver is timed after 1,000 puts, in its steady state (its write-ahead log rewritten in place, as our segment now is). What is left over the saver is CPU: the `started` line, the input fingerprint, the strict canonical encoding, sha256 and delta of the 10 KB output, and the fences (a readdir each). The same miss through runWorkflow's `ctx.step` adds the run's own per-step work: see the run-step section.",
    "- *Reuse hit.* A hit is an input fingerprint, a map lookup, one positioned read, a sha256 check of the output and JSON.parse (6–30 µs in this session's runs, median 8.0 µs; 9.5 µs before the engine's step flow, in the runs alternated with them). SqliteSaver.getTuple of a 1 KB checkpoint comes from SQLite's page cache in 16–69 µs on this machine. 0.2× would need to drop the integrity check of the stored output or hand out cached parsed outputs (shared mutable objects); we keep both.",
    "- *Resume of 10,000 steps (met).* A snapshot keeps its steps sorted by key with a key block and an offset table (layout 2, docs/decisions.md): opening reads the snap line, the state and event lines, the keys and the table (169 KB for 10,000 steps, against a 2.6 MB index section in layout 1), checks the table and parses no step header; the first hit is a binary search and one read of a group of step lines. The segment is read from its last `base` line on (searched backwards), so the first open after the run closed does not re-read its 12 MB segment either. Figures of `pnpm bench run-log-goals` (load average 3–5), the same bench file run first on the branch point (4b47da2) and then on this code, one after the other: before, resume 38.59 ms vs 2.07 ms for 10 steps (18.6×) and first resume after the run closed 183.91 ms vs 2.86 ms (64.3×); after, 2.49 ms vs 2.11 ms (1.18×; 0.12× of the 20 ms budget) and 3.22 ms vs 2.34 ms (1.38×). An earlier pair under load average 15–30 gave 24.65 ms vs 3.29 ms (7.5×) and 408 ms vs 9.57 ms (42.6×) before, 4.40 ms vs 3.92 ms (1.12×) and 7.85 ms vs 6.90 ms (1.14×) after. What remains per step at open is reading and checking the table (two u32 reads and one key comparison per step): loading the 10,000-step snapshot took 0.33 ms at best and 1.6 ms median over 30 loads here, against 17 ms / 65 ms for the same run's layout-1 snapshot. The engine's step flow left it as it was: in the six alternated runs above, resume 1.38× after against 1.40× before (medians) and first resume 1.25× against 1.27×.",
    "- *Fingerprints.* (rows from `pnpm exec tsx --conditions=@phasekit/source bench/fingerprint-rows.ts`, the fingerprint rows of this suite alone, five contenders interleaved in one run, 15 rounds; load average 7–25 during it.) One walk checks the value and notes whether all keys are in order and which keys occur; the engine then writes the text, through `JSON.stringify(value, sortedKeys)` when keys must be reordered (no copies), and sha256 is one-shot `crypto.hash`. Before, in one scratch run side by side with the previous encoder: 1 KB 3.62× → 3.20×, 100 KB 4.54× → 2.62×, 1 MB 4.18× → 2.68×. 1.5× is out of reach on this machine without giving up strictness, and the rows show why: (1) the bench value's objects all have unsorted keys, and the canonical bytes alone, written by the engine with no check at all, already cost 1.4–1.8× JSON.stringify + sha256 (a key list takes JSON.stringify off its fast path; a sorted copy cost more); (2) on input whose keys are already sorted (no reordering, plain fast-path JSON.stringify) the fingerprint is still 2.2–2.3×: the strict checks alone cost more than the 0.5× budget. An ablation on sorted input (scratch, one run, ratios to JSON.stringify + sha256): all checks 1.9–2.5×; without the per-container own-key counts (Reflect.ownKeys on arrays, getOwnPropertyNames/Symbols on objects, which catch hidden and symbol keys) 1.5–2.1×; without the per-property getter lookup 1.9–2.2×; without both 1.2–1.7×. Each of those is a native call per container or per property for which V8 offers no cheaper public form (Reflect.ownKeys on an object was 10× Object.keys and is no longer used). We keep the strictness (a fingerprint must never equate two different values).",
    "- *Peak RSS of the 10,000-step run* includes the compaction at close (a segment past 4 MiB), which reads every live value once to write the snapshot.",
  ],
  run: runGoals,
};
