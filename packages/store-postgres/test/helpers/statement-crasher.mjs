// Child of statement-crash.int.test.ts: one holder's life on a PostgreSQL run, through the store's public API
// (lock, metadata writes, a journal event, steps, a commit intent and its mark, a compaction, release). It
// prints `ok <key> <output digest> <reused>` once a step is acknowledged, `gen <n>` once a metadata write is.
// With <killAt> > 0 it SIGKILLs itself at statement number <killAt> of the store's pool: <mode> "before" kills it
// before the statement is sent; "after" once it has committed, before the store sees the reply; "stop" stops
// itself (SIGSTOP) before the statement is sent, after printing `stopping <n>`, and goes on when continued.
//   argv: url namespace killAt mode leaseMs
import { createHash } from "node:crypto";
import pg from "pg";
import { openPostgresPlanStore } from "../../dist/index.js";

const [url, namespace, killAtText, mode, leaseText] = process.argv.slice(2);
const killAt = Number(killAtText);
const STEPS = 4;
let n = 0;
const die = () => process.kill(process.pid, "SIGKILL");
// The write count's raises (src/store/write-count.ts) are not counted: how many there are, and where they fall
// among the others, depends on timing (writes within 20 ms share one), so counting them would make statement n a
// different statement from run to run. They write no history, only the readers' hint that the sweeps do not check.
const RAISE = "phasekit_raise_write_count";
// "stop": the process stops with nothing in flight. Statements sent before statement n (a background read of the
// step index, a write the main flow did not wait for) settle and their callers go on first, and nothing is sent
// from then until the process is continued. Stopped with a statement in flight, a write that landed under the
// live lease was acknowledged only after the continue, and the test took it for a late acknowledgement.
const inFlight = new Set();
let held;
const stopQuietly = async (at) => {
  while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
  await new Promise((r) => setImmediate(r));
  // Pipes are written synchronously on Linux: the test reads this line before it sees the process stopped.
  process.stdout.write(`stopping ${at}\n`);
  process.kill(process.pid, "SIGSTOP");
  process.stdout.write(`continued\n`);
};
const counted = async (run, what) => {
  if (what === RAISE) return run();
  while (held !== undefined) await held;
  n++;
  if (process.env.CRASHER_TRACE) process.stderr.write(`${n} ${String(what).replace(/\s+/g, " ").slice(0, 90)}\n`);
  if (n === killAt && mode === "before") die();
  if (n === killAt && mode === "stop") {
    held = stopQuietly(n);
    await held;
    held = undefined;
  }
  const at = n;
  let result;
  const sent = run();
  inFlight.add(sent);
  try {
    result = await sent;
  } finally {
    inFlight.delete(sent);
    if (process.env.CRASHER_TRACE) process.stderr.write(`${at} done\n`);
  }
  if (at === killAt && mode === "after") die();
  return result;
};
// Bounded waits as the store's own pools have them (docs/postgres.md, "Timeouts"), short: a holder stopped inside
// its compaction's transaction holds the run's row until the server ends its idle session.
const pool = new pg.Pool({ connectionString: url, max: 4, idle_in_transaction_session_timeout: 1000, lock_timeout: 3000, statement_timeout: 10000 });
pool.on("error", () => undefined);
const wrapClient = (client) =>
  new Proxy(client, {
    get(target, key) {
      if (key === "query") return (...args) => (typeof args.at(-1) === "function" ? target.query(...args) : counted(() => target.query(...args), typeof args[0] === "string" ? args[0] : args[0]?.name ?? args[0]?.text));
      const v = Reflect.get(target, key, target);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
const watched = new Proxy(pool, {
  get(target, key) {
    if (key === "query") return (...args) => counted(() => target.query(...args), typeof args[0] === "string" ? args[0] : args[0]?.name ?? args[0]?.text);
    if (key === "connect") return async () => wrapClient(await target.connect());
    const v = Reflect.get(target, key, target);
    return typeof v === "function" ? v.bind(target) : v;
  },
});
const digest = (v) => createHash("sha256").update(JSON.stringify(v)).digest("hex").slice(0, 16);
const outputOf = (i) => ({ i, text: `output of step ${i}`.repeat(i + 1) });
const meta = (step) => ({
  slug: "run",
  ownerTool: "crasher",
  currentTool: "crasher",
  status: "running",
  phase: "work",
  createdAt: "2026-01-02T03:04:05.000Z",
  updatedAt: new Date(Date.UTC(2026, 0, 2) + step * 1000).toISOString(),
  state: { step },
});

const store = await openPostgresPlanStore({ pool: watched, namespace, leaseMs: Number(leaseText) });
const got = await store.lock("run", { owner: { tool: "crasher" }, retries: 200 });
if (!got.ok) throw got.error;
process.stdout.write(`locked ${n}\n`);
const s = got.lock.store;
const read = await s.readMetadata("run");
if (!read.ok) throw read.error;
let generation = read.metadata?.generation ?? null;
const write = async (step) => {
  const w = await s.writeMetadata("run", meta(step), generation);
  if (!w.ok) throw w.error;
  generation = w.metadata.generation;
  process.stdout.write(`gen ${generation}\n`);
};
await write(0);
const cps = await s.checkpoints("run", { now: () => new Date() });
for (let i = 0; i < STEPS; i++) {
  const r = await cps.step(`s${i}`, { i }, () => outputOf(i));
  process.stdout.write(`ok s${i} ${digest(r.output)} ${r.reused}\n`);
  if (i === 1) {
    const j = await s.appendJournal("run", { generation, at: new Date().toISOString(), event: "halfway", data: { i } });
    if (!j.ok) throw j.error;
    await cps.recordCommitIntent({ id: "c1", message: "halfway", files: [] });
    await cps.markCommitted("c1", { sha: "abc1234" });
    await cps.compact();
  }
  await write(i + 1);
}
const released = await got.lock.release();
if (!released.ok) throw released.error;
await store.close();
await pool.end();
process.stdout.write(`statements ${n}\n`);
