/**
 * A durable step on PostgreSQL (loopback) vs the fs store vs one bare `INSERT …; COMMIT` with
 * synchronous_commit=on, interleaved round by round; then steps/s with 1, 4 and 16 concurrent runs.
 */
import { performance } from "node:perf_hooks";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { createFsPlanStore, type CheckpointStore } from "@phasekit/adapters-pi";
import type { BenchRow, BenchSuite } from "../../../bench/harness.js";
import { median, medianRatio } from "../../../bench/suites/interleave.js";
import { openPostgresPlanStore, type PostgresPlanStore } from "../src/index.js";
import { STEP_WRITES } from "../src/store/step-writes.js";
import { startCluster } from "../test/helpers/cluster.js";
import { resumeRows } from "./pg-resume.js";

const ROUNDS = process.env.CI ? 3 : 10;
const PER_ROUND = process.env.CI ? 5 : 20;
// The miss is timed over more rounds than the rest: the flush it shares with the bare commit swings with the
// disk's other work, and each round's ratio compares the two under the same swing.
const MISS_ROUNDS = process.env.CI ? 3 : 30;
const WINDOW_MS = process.env.CI ? 300 : 1_500;
const OUTPUT = { text: "x".repeat(1_000) };
const RESUME_STEPS = process.env.CI ? 1_000 : 10_000;

export const suite: BenchSuite = {
  title: "PostgreSQL store: a durable step",
  description: `Throwaway cluster on 127.0.0.1 (fsync=on, synchronous_commit=on). Miss: CheckpointStore.step on a fresh id with a 1 KB output (the same each step, so its content is already stored; the \"new output\" row makes a new one each step), on a fresh lease: the body starts at once and, ending within its turn, sends no \`started\` record; the artifact + completed record go in one durable statement (prepared, fenced by epoch). "Its durable statement alone" sends that statement directly with the holder's fence (no engine, no encoding). Contenders interleaved round by round (${MISS_ROUNDS} rounds × ${PER_ROUND} ops; times are medians of round means, ratios the median of the per-round ratios). Throughput: N runs, each its own lease and connection, stepping in a loop for ${WINDOW_MS} ms; levels interleaved over ${ROUNDS} rounds, median. Resume: take the lease (a new epoch), open the checkpoints, reuse the first step as runWorkflow does (record() for the attempt cap, then step()), release; a run of ${RESUME_STEPS.toLocaleString("en")} steps and one of 10 (1 KB outputs), alternating round by round (median of the per-round ratios); between rounds the step index, which loads in the background once a second step is read on its own or every record is asked for (here: records() after the release), is loaded (its time, from the lease on, is the "index loaded" row). Reuse hit: record() + step() on a resumed run whose index is loaded; statements counted by wrapping the store's pool.query.`,
  notes: [
    "- *Step miss against 1.5×, and under 1.35× on most runs (schema 10 and the kept connection).* Three changes, each measured side by side in one process against what it replaced (interleaved rounds, 50–100 rounds, 3–8 runs each), then in whole runs of this file: (1) schema 10 drops the foreign keys of `phasekit_steps` and `phasekit_artifacts` to the run row (the fence already locks that row `FOR SHARE` in the same statement; the key's check trigger repeated the lookup and the lock), and a trigger on `phasekit_runs` deletes a run's steps and artifacts in their place: the miss 0.91–0.95× of itself with the key (two databases of one cluster, interleaved), the statement alone now 0.98–1.19× the bare commit (1.19× in the run at load average 7.5; 0.98–1.14× in the others); (2) the store's own pool keeps one connection checked out between statements that follow within 5 ms (`db/kept-client.ts`): no checkout and release per statement (pg-pool's connect and idle timers, its send deferred to the next tick, its events), every bound kept (the reply and server-side timeouts are the connection's; the checkout waits at most `connectMs`): 0.915–1.016× of the same store given a pool of the same settings, median ~0.95 over 8 runs; (3) on that connection statements go out as a `pg.Query` with a callback (no copy of the config's property descriptors, no promise of pg's own): 0.958–0.992× over 4 runs. Whole runs, on the shared 2-core machine while other sessions ran tests (load average 1.5–5): with (1) 1.31, 1.35× and 1.20× (load average 7.5, the bare commit at 1.12 ms); with (1) and (2) 1.17, 1.29 and 1.41×; with all three 1.16, 1.18, 1.25, 1.12, 1.26, 1.43 (at load average 5) and 1.28×, and 1.11× in the table's run; the first run of the session, before them, read 1.61×. So ≤ 1.5× on every run since (1), and ≤ 1.35× on all but two of the fourteen runs since (1) (1.41 and 1.43×, both at a load average of 3–5, when the client's share grows): what is left above the statement alone (1.06–1.27× of it) is the client's own work before the send (the engine's flow: key check, hashing, canonical encoding), which competes for the two cores with the other sessions' processes while the server's part is mostly the flush. Measured and not kept: the `pg.Query` form on the pool's path (0.98–1.02×).",
    "- *Step miss against 1.5× before schema 10 (not on every run: 1.25–1.56× in fourteen runs after the changes, 1.35× or less in six).* Three changes, the first two to the miss's one durable statement, each measured side by side in one process against what it replaced (interleaved rounds, 40–50 rounds, 2–3 runs each): the statement answers no row (schema 9: its fence refuses by raising SQLSTATE `PKF01` from `phasekit_fence_refused`, and its command tag counts the artifact row written), ~19 µs less server time and ~10 µs less client reply handling; a step the holder knows has no row (its step index read it absent and no `started` record was sent) is inserted with a plain `INSERT` instead of the upsert, whose speculative insertion cost 8–11 µs; and the record's two time stamps are formatted without `toISOString` (3–4 µs each on cold caches). The statement alone now reads 1.07–1.16× the bare commit. Runs after the first two changes read 1.25, 1.38, 1.38, 1.42, 1.26, 1.40 and 1.38×, after all three 1.38, 1.50, 1.31, 1.31 and 1.35×, and 1.56 and 1.32× in two runs of the miss rows alone (the new-output row 1.29–1.51×; the table is one more run); one run with the first change only, while another process held one of the two cores, read 1.67×. The runs before the changes read 1.35, 1.36, 1.41, 1.42, 1.43 and 1.52×. Between runs the ratio moves by ±0.1 with what else runs on the machine, more than the last change is worth. Where the rest goes, timed with marks along the path in the same interleaved setting (medians per step): from the call to the socket write the miss's client takes ~80 µs against ~17 µs for the bare commit, the engine's flow (key check, input and output hashing, canonical encoding, the records) ~45 µs of it, which a hot loop on a pool that answers at once does in ~13 µs (each step starts on caches gone cold in the ~250 µs the flush takes; the first hash of a step alone costs ~8 µs), and the pool and driver ~33 µs against ~17 (pg-pool's connect timer and pg's reply timer, which the store's bounded waits set, pg's copy of a named statement's config, the stack unwinding before pg-pool's deferred send); after the reply ~27 µs against ~11. Tried and not kept then: dropping the step row's foreign key to the run row (its check trigger costs ~14 µs of server time per new row: in two runs of the miss rows alone without it, the statement alone read 0.98 and 1.03× and the miss 1.31 and 1.37×; the cascade needed a trigger of its own: taken with schema 10, above); dropping the pool's connect, reply and idle timers (5–8 µs, not worth the bounded waits; the kept connection above skips the connect and idle timers with every bound kept); fewer async layers on the write path (six layers cost ~2 µs); the statement settings (statement, lock and idle timeouts cost nothing measurable); the send delayed by the client's work is not what costs (a spin of up to 100 µs before the same statement left its server time unchanged). Before this: schema 8 dropped the trigger that raised the run's write count in every step statement (its presence cost ~0.1× of the bare commit even with a `WHEN` clause that kept it from firing; the store raises the count itself, one statement per 20 ms of writes, docs/postgres.md, version 8), and the fence as an `UPDATE` of the run row (1.39–1.46×) and `fillfactor = 10` on the count's table were no better. The new-output row also inserts the artifact row.",
    "- *Where the old two-statement miss's time went (measured before the change above).* With fsync off: bare 48 µs, a round trip (`SELECT 1`) 25 µs, the `started` statement alone 132 µs against 37 µs for a plain unflushed `INSERT`, the completion alone 114 µs against 48; on one connection the `started` round trip grew from 38 µs (the record into a plain table) to 50 (a table shaped like phasekit_steps), 58 (+ the foreign key to the run row), 73 (+ schema 7's write-count trigger), 82 (+ the fence) and 93 (+ an artifact CTE it carried, since dropped); the count done in the statement instead of the trigger measured 67 against 73 µs, not worth a migration.",
    "- *Resume of 10,000 steps.* Opening a holder's checkpoints no longer reads the run's records before the first step: the step index (every record, no outputs) loads in the background, and until it is in a step is read on its own (record and output in one statement). Measured with `npx tsx --conditions=@phasekit/source bench/run.ts pg-step` on the shared 2-core machine (load average 1.4–5), the resume rows of this file first on the code before (dfd7271^) and then after: before, 47.28 ms vs 5.17 ms for 10 steps (10.85×, 2.4× the 20 ms budget: the first reuse waited for all 10,000 records, parsed as jsonb); after, over 9 runs, 1.84–9.40 ms vs 1.73–4.23 ms, median of per-round ratios 1.09×–2.47× (one run of 9 above 2×), always ≤ 0.47× of the budget. What remained was the index load itself (35–51 ms for 10,000 records, from the lease on) running beside the first step and the release on a loaded 2-core machine (the table before this change read 2.87×): it was made lighter (records kept as text, parsed on use; the run-order sort done by the server) and starting it after the first step's answer or reading it in pages of 1,000 moved the cost to the release without lowering it. Now the index loads once a second step is read on its own (the body is replaying; until the load is in, the replay reads each step on its own either way) or every record is asked for, so opening and the first reuse send one statement whatever the run's length and do not share the machine with the load (measured side by side: the first step's read 224 µs against 3,812 µs with the load started at open). The load's cost is not lowered, only not paid before the first reuse: a replay starts it one step later. Since: 0.97, 1.01, 0.77, 0.88, 0.96, 0.99, 0.91, 0.93, 0.90, 0.67, 0.77, 0.79, 0.79× and the table's 0.79× in fourteen runs (the first of the session, before it: 2.53×), 1.6–5.3 ms against 1.8–5.8 ms for 10 steps. The load itself (the server sorts 4 MB of records and spills them to disk past `work_mem`; converting each record from jsonb to text is ~7 ms of the server's ~18 ms) is what the \"index loaded\" row reports.",
    "- *Reuse hit.* Deciding reads nothing once the index is in; a hit reads its output with the outputs of the next 32 steps in first-run order (≤ 1 MiB), so an in-order replay makes one statement per 33 hits (0.04–0.06 statements per hit here). Inside runWorkflow each step also asks for pending control requests (one statement per step, hit or miss), so a re-entry of reused steps costs 1.10 statements per step: the goal's one round trip, which that check alone takes.",
  ],
  async run() {
    const started = startCluster();
    if (!started.ok) throw new Error(`bench needs PostgreSQL: ${started.reason}`);
    const { cluster } = started;
    const stores: PostgresPlanStore[] = [];
    const bare = new pg.Pool({ connectionString: cluster.url, max: 1 });
    try {
      await bare.query("CREATE TABLE bench_bare (k bigint PRIMARY KEY, v jsonb NOT NULL)");
      const open = async (ns: string): Promise<PostgresPlanStore> => {
        const s = await openPostgresPlanStore({ connectionString: cluster.url, namespace: ns });
        stores.push(s);
        return s;
      };
      const held = async (store: PostgresPlanStore, slug: string): Promise<CheckpointStore> => {
        const l = await store.lock(slug, { owner: { tool: "bench" } });
        if (!l.ok) throw l.error;
        return store.checkpoints(slug, { now: () => new Date() });
      };
      const pgCps = await held(await open("bench"), "latency");
      // The miss's one durable statement sent alone, with the holder's fence and a record and output of the same
      // size: what the statement costs before any client work (the engine, the encoding, the pool's queueing). As
      // the miss sends it: a step with no row (a plain INSERT of the record), its output already stored.
      const lease = (await bare.query<{ epoch: string; holder: string }>("SELECT epoch, holder FROM phasekit_runs WHERE namespace = 'bench' AND slug = 'latency'")).rows[0]!;
      const direct = new pg.Pool({ connectionString: cluster.url, max: 1 });
      const fp = (i: number, d: string): string => `v1:sha256:${d}${String(i).padStart(63, "0")}`;
      const completion = (i: number) => {
        const record = { v: 1, kind: "step", stepId: `d${i}`, status: "completed", attempt: 1, inputFingerprint: fp(i, "a"), outputFingerprint: fp(0, "b"), startedAt: new Date().toISOString(), finishedAt: new Date().toISOString() };
        const values = ["bench", "latency", lease.epoch, lease.holder, `d${i}`, JSON.stringify(record), fp(0, "b"), JSON.stringify(OUTPUT), null];
        return direct.query({ name: STEP_WRITES.completedFresh.name, text: STEP_WRITES.completedFresh.text, values });
      };
      const fsStore = createFsPlanStore({ repoRoot: mkdtempSync(path.join(tmpdir(), "phasekit-bench-pg-fs-")) });
      const fsLock = await fsStore.lock("latency", { owner: { tool: "bench" } });
      if (!fsLock.ok) throw fsLock.error;
      const fsCps = await fsStore.checkpoints("latency", { now: () => new Date() });
      let n = 0;
      const contenders: Record<string, () => Promise<unknown>> = {
        pg: () => pgCps.step(`s${n++}`, { n }, () => OUTPUT),
        // A new 1 KB output each step: the artifact row is inserted, not found (and no delta pays on unrelated text).
        fresh: () => {
          const i = n++;
          return pgCps.step(`s${i}`, { i }, () => ({ text: `${i}:`.padEnd(1_000, "y") }));
        },
        fs: () => fsCps.step(`s${n++}`, { n }, () => OUTPUT),
        bare: () => bare.query("INSERT INTO bench_bare (k, v) VALUES ($1, $2)", [n++, OUTPUT]),
        statement: () => completion(n++),
      };
      const perRound: Record<string, number[]> = { pg: [], fresh: [], fs: [], bare: [], statement: [] };
      for (let r = 0; r < MISS_ROUNDS + 1; r++) {
        const order = Object.keys(contenders);
        for (let k = 0; k < r % order.length; k++) order.push(order.shift() as string);
        for (const name of order) {
          const t0 = performance.now();
          for (let i = 0; i < PER_ROUND; i++) await contenders[name]!();
          if (r > 0) perRound[name]!.push(((performance.now() - t0) / PER_ROUND) * 1e6); // round 0 warms up
        }
      }
      await fsLock.lock.release();
      await fsStore.close();
      await direct.end();

      // Throughput at 1, 4 and 16 concurrent runs, levels interleaved round by round.
      const levels = [1, 4, 16];
      const rates: Record<number, number[]> = { 1: [], 4: [], 16: [] };
      const runStores = await Promise.all(Array.from({ length: 16 }, (_, i) => open(`tp-${i}`)));
      let round = 0;
      for (let r = 0; r < ROUNDS; r++) {
        for (const c of r % 2 === 0 ? levels : [...levels].reverse()) {
          const cps = await Promise.all(runStores.slice(0, c).map((s, i) => held(s, `run-${round}-${i}`)));
          round++;
          let steps = 0;
          const end = performance.now() + WINDOW_MS;
          const t0 = performance.now();
          await Promise.all(
            cps.map(async (cp, i) => {
              for (let k = 0; performance.now() < end; k++) {
                await cp.step(`s${k}`, { i, k }, () => OUTPUT);
                steps++;
              }
            }),
          );
          rates[c]!.push(steps / ((performance.now() - t0) / 1000));
        }
      }
      // The throughput runs' stores let go of their connections (each pool keeps its idle ones for a while): left
      // open, they held ~86 of the cluster's 100, and the resume's fill then failed with "too many clients".
      for (const s of runStores) {
        await s.close();
        stores.splice(stores.indexOf(s), 1);
      }
      const resumed = await resumeRows(cluster.url, { bigSteps: RESUME_STEPS, rounds: ROUNDS, hits: PER_ROUND });
      const pgNs = median(perRound.pg!);
      const bareNs = median(perRound.bare!);
      const fsNs = median(perRound.fs!);
      const rate = (c: number): number => median(rates[c]!);
      const missRatio = medianRatio(perRound.pg!, perRound.bare!);
      const statementNs = median(perRound.statement!);
      return [
        { subject: "pg step miss (1 KB output)", baseline: "bare INSERT + COMMIT", subjectNs: pgNs, baselineNs: bareNs, ratio: missRatio, goal: "≤ 1.5×", met: missRatio <= 1.5 },
        { subject: "pg step miss, a new 1 KB output each step", baseline: "bare INSERT + COMMIT", subjectNs: median(perRound.fresh!), baselineNs: bareNs, ratio: medianRatio(perRound.fresh!, perRound.bare!), goal: "report" },
        { subject: "pg step miss (1 KB output)", baseline: "fs store step miss", subjectNs: pgNs, baselineNs: fsNs, ratio: medianRatio(perRound.pg!, perRound.fs!), goal: "report" },
        { subject: "the miss's durable statement alone (fenced: artifact + completed record)", baseline: "bare INSERT + COMMIT", subjectNs: statementNs, baselineNs: bareNs, ratio: medianRatio(perRound.statement!, perRound.bare!), goal: "report" },
        { subject: "pg step miss (1 KB output)", baseline: "its durable statement alone", subjectNs: pgNs, baselineNs: statementNs, ratio: medianRatio(perRound.pg!, perRound.statement!), goal: "report" },
        ...levels.map(
          (c): BenchRow => ({
            subject: `pg, ${c} concurrent run${c === 1 ? "" : "s"}: ${rate(c).toFixed(0)} steps/s`,
            baseline: `pg, 1 run: ${rate(1).toFixed(0)} steps/s`,
            subjectNs: 1e9 / rate(c),
            baselineNs: 1e9 / rate(1),
            goal: "report (ns per step, all runs together)",
          }),
        ),
        ...resumed,
      ];
    } finally {
      for (const s of stores) await s.close();
      await bare.end();
      cluster.destroy();
    }
  },
};
