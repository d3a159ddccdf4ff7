/**
 * Faults as a test: several machines (processes) drive one run while the test injects faults at random
 * (SIGSTOP past the lease, every machine paused past it with the holder woken first, SIGKILL, a partition made
 * by pausing a TCP proxy, pg_terminate_backend, a fast restart of the server), then one clean machine finishes
 * the run. An audit table filled by triggers records every lease acquisition and every step write in commit
 * order, with its epoch. Checked: 0 displaced writes (a write under an epoch older than one already acquired),
 * 0 lost acknowledgements (a step a machine saw acknowledged never runs again), 0 false LOCK_LOST (each one
 * names an epoch that a later acquisition displaced). Prints the counts. PHASEKIT_FAULT_ROUNDS sets the length
 * (CI: the short default).
 */
import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { startCluster } from "./helpers/cluster.js";
import { spawnMachine, type Machine } from "./helpers/spawn-machine.js";
import { startTcpProxy } from "./helpers/tcp-proxy.js";

const started = startCluster();
const ROUNDS = Number(process.env.PHASEKIT_FAULT_ROUNDS ?? 9);
const STEPS = 30;
const LEASE_MS = 800;

const AUDIT = `
CREATE TABLE IF NOT EXISTS fault_audit (seq bigserial PRIMARY KEY, kind text NOT NULL, namespace text NOT NULL, step_id text, status text, epoch bigint NOT NULL, at timestamptz NOT NULL DEFAULT clock_timestamp());
CREATE OR REPLACE FUNCTION fault_audit_run() RETURNS trigger AS $$ BEGIN
  IF TG_OP = 'INSERT' OR NEW.epoch IS DISTINCT FROM OLD.epoch THEN
    INSERT INTO fault_audit (kind, namespace, epoch) VALUES ('acquire', NEW.namespace, NEW.epoch);
  END IF; RETURN NEW; END $$ LANGUAGE plpgsql;
CREATE OR REPLACE FUNCTION fault_audit_step() RETURNS trigger AS $$ BEGIN
  INSERT INTO fault_audit (kind, namespace, step_id, status, epoch) VALUES ('step', NEW.namespace, NEW.step_id, NEW.record->>'status', NEW.epoch);
  RETURN NEW; END $$ LANGUAGE plpgsql;
DROP TRIGGER IF EXISTS fault_audit_run ON phasekit_runs;
CREATE TRIGGER fault_audit_run AFTER INSERT OR UPDATE ON phasekit_runs FOR EACH ROW EXECUTE FUNCTION fault_audit_run();
DROP TRIGGER IF EXISTS fault_audit_step ON phasekit_steps;
CREATE TRIGGER fault_audit_step AFTER INSERT OR UPDATE ON phasekit_steps FOR EACH ROW EXECUTE FUNCTION fault_audit_step();`;

if (!started.ok) {
  describe.skip(`postgres faults (SKIPPED: ${started.reason})`, () => it("needs PostgreSQL", () => undefined));
} else {
  const { cluster } = started;
  const admin = () => new pg.Pool({ connectionString: cluster.url, max: 2 });
  afterAll(() => cluster.destroy());

  describe("postgres store under injected faults", () => {
    it("SIGSTOP past the lease, all machines paused, SIGKILL, pg_terminate_backend, a partition, a server restart: 0 displaced writes, 0 lost acknowledgements, 0 false LOCK_LOST", async () => {
      const namespace = `faults-${randomUUID()}`;
      let pool = admin();
      await pool.query(AUDIT);
      // The machines reach the server through a TCP proxy the test can pause (a partition).
      const proxy = await startTcpProxy(cluster.port);
      const url = `postgres://phasekit@127.0.0.1:${proxy.port}/phasekit`;
      const spawn = (): Machine => spawnMachine({ url, namespace, slug: "chaos", steps: STEPS, stepMs: 100, leaseMs: LEASE_MS, mode: "workflow" });
      const all: Machine[] = [];
      const live = new Set<Machine>();
      const start = (): void => {
        const m = spawn();
        all.push(m);
        live.add(m);
        void m.exited.then(() => live.delete(m));
      };
      for (let i = 0; i < 3; i++) start();
      const faults = { sigstop: 0, pauseAll: 0, sigkill: 0, terminate: 0, partition: 0, restart: 0 };
      // The holder (it printed "locked") is the one a SIGSTOP or SIGKILL should hit.
      const pick = (): Machine | undefined => [...live].find((m) => m.events.some((e) => e.ev === "locked")) ?? [...live][Math.floor(Math.random() * live.size)];
      // Every kind at least once, in random order, then random ones (one restart at most: it costs seconds).
      const kinds: Array<keyof typeof faults> = ["sigstop", "pauseAll", "sigkill", "terminate", "partition", "restart"];
      const schedule = [...kinds, ...Array.from({ length: Math.max(0, ROUNDS - kinds.length) }, () => kinds[Math.floor(Math.random() * 5)] as keyof typeof faults)]
        .map((k) => ({ k, r: Math.random() }))
        .sort((a, b) => a.r - b.r)
        .map((x) => x.k);
      for (const fault of schedule) {
        // Machines that ended (finished, killed, or failed on a fault) are replaced while faults go on.
        while (live.size < 3) start();
        await sleep(150 + Math.random() * 250);
        if (live.size === 0) start();
        const m = pick();
        if (fault === "sigstop" && m?.proc.pid !== undefined) {
          m.proc.kill("SIGSTOP");
          await sleep(LEASE_MS + 300);
          m.proc.kill("SIGCONT");
        } else if (fault === "pauseAll" && m?.proc.pid !== undefined) {
          // Every machine paused past the lease; the holder wakes first, so nobody contends: no LOCK_LOST is due.
          const others = [...live].filter((x) => x !== m);
          for (const x of [m, ...others]) x.proc.kill("SIGSTOP");
          await sleep(LEASE_MS + 300);
          m.proc.kill("SIGCONT");
          await sleep(400);
          for (const x of others) x.proc.kill("SIGCONT");
        } else if (fault === "sigkill" && m !== undefined) {
          m.proc.kill("SIGKILL");
        } else if (fault === "terminate") {
          await pool.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'");
        } else if (fault === "partition") {
          proxy.pause();
          await sleep(LEASE_MS + 500);
          proxy.resume();
        } else if (fault === "restart") {
          await pool.end();
          cluster.stop("fast");
          cluster.start();
          pool = admin();
        } else continue;
        faults[fault]++;
      }
      await Promise.all([...live].map((m) => m.exited));
      await proxy.close();
      // One clean machine finishes the run.
      const last = spawnMachine({ url: cluster.url, namespace, slug: "chaos", steps: STEPS, stepMs: 100, leaseMs: LEASE_MS, mode: "workflow" });
      all.push(last);
      expect(await last.exited).toBe(0);
      expect(last.events.at(-1)).toMatchObject({ ev: "end", status: "completed" });

      const audit = (
        await pool.query<{ kind: string; epoch: string; at_ms: number }>("SELECT kind, epoch, extract(epoch FROM at) * 1000 AS at_ms FROM fault_audit WHERE namespace = $1 ORDER BY seq", [namespace])
      ).rows;
      let newest = 0;
      let displaced = 0;
      const acquired: Array<{ epoch: number; atMs: number }> = [];
      for (const a of audit) {
        const epoch = Number(a.epoch);
        if (a.kind === "acquire") (newest = Math.max(newest, epoch)), acquired.push({ epoch, atMs: Number(a.at_ms) });
        else if (epoch < newest) displaced++;
      }
      // An acknowledged step (a machine's ctx.step returned) is never run again by anyone after that.
      const events = all.flatMap((m) => m.events).sort((x, y) => x.t - y.t);
      const ackedAt = new Map<number, number>();
      let lostAcks = 0;
      const lost: number[] = [];
      for (const e of events) {
        if (e.ev === "done" && e.i !== undefined && !ackedAt.has(e.i)) ackedAt.set(e.i, e.t);
        if (e.ev === "run" && e.i !== undefined && (ackedAt.get(e.i) ?? Infinity) < e.t) lostAcks++, lost.push(e.i);
      }
      // What a failure needs to be understood: every machine's events around the step, and the step's audit rows.
      for (const i of lost) {
        const rows = (await pool.query("SELECT seq, kind, step_id, status, epoch, at FROM fault_audit WHERE namespace = $1 AND (kind = 'acquire' OR step_id = $2) ORDER BY seq", [namespace, `s${i}`])).rows;
        console.log(`lost acknowledgement of step ${i}:\n${events.filter((e) => e.i === undefined || e.i === i || e.i === i - 1 || e.i === i + 1).map((e) => JSON.stringify(e)).join("\n")}\naudit:\n${rows.map((r) => JSON.stringify(r)).join("\n")}`);
      }
      // LOCK_LOST names the displaced epoch: a later one must have been acquired before it was reported (same host clock).
      const lockLost = events.filter((e) => e.ev === "error" && e.code === "LOCK_LOST");
      const falseLockLost = lockLost.filter((e) => e.epoch === undefined || !acquired.some((x) => x.epoch > (e.epoch as number) && x.atMs <= e.t)).length;
      const errors = events.filter((e) => e.ev === "error").map((e) => e.code);
      const steps = (await pool.query<{ n: string }>("SELECT count(*) AS n FROM phasekit_steps WHERE namespace = $1 AND record->>'status' = 'completed' AND step_id NOT LIKE 'phasekit:%'", [namespace])).rows[0]?.n;
      await pool.end();
      console.log(
        `faults: ${JSON.stringify(faults)}; machines ${all.length}; acquisitions ${acquired.length}; step writes ${audit.length - acquired.length}; ` +
          `errors ${JSON.stringify(errors)}; displaced writes ${displaced}; lost acknowledgements ${lostAcks}; false LOCK_LOST ${falseLockLost}`,
      );
      expect({ displaced, lostAcks, falseLockLost }).toEqual({ displaced: 0, lostAcks: 0, falseLockLost: 0 });
      expect(Number(steps)).toBe(STEPS);
    }, 120_000);
  });
}
