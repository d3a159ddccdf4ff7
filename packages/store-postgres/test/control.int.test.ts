/**
 * Pause and stop across machines: a runWorkflow run in one process against PostgreSQL, the request filed from
 * another process (its own connection, no lease) through the pg store. The runner sees it through the store at
 * its next step boundary (pause) or while a step runs (stop aborts the step's signal).
 */
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { startCluster } from "./helpers/cluster.js";
import { storeSetup } from "./helpers/stores.js";
import { requestFromAnotherProcess, spawnMachine, type MachineEvent } from "./helpers/spawn-machine.js";

const started = startCluster();

if (!started.ok) {
  describe.skip(`postgres control requests across machines (SKIPPED: ${started.reason})`, () => it("needs PostgreSQL", () => undefined));
} else {
  const { cluster } = started;
  const { admin: pool } = storeSetup(cluster);
  const row = async (namespace: string, slug: string) => {
    const run = await pool.query<{ status: string; metadata: { failureReason?: string } }>("SELECT status, metadata FROM phasekit_runs WHERE namespace = $1 AND slug = $2", [namespace, slug]);
    const control = await pool.query<{ kind: string }>("SELECT kind FROM phasekit_control WHERE namespace = $1 AND slug = $2", [namespace, slug]);
    const journal = await pool.query<{ event: string }>("SELECT entry->>'event' AS event FROM phasekit_journal WHERE namespace = $1 AND slug = $2 ORDER BY seq", [namespace, slug]);
    return { status: run.rows[0]?.status, failureReason: run.rows[0]?.metadata.failureReason, control: control.rows.map((r) => r.kind), events: journal.rows.map((r) => r.event) };
  };
  const ran = (events: MachineEvent[]): number[] => events.filter((e) => e.ev === "run").map((e) => e.i ?? -1);

  describe("postgres control requests across machines", () => {
    it("a pause filed from another process ends the run paused at its next step; a resume elsewhere reuses the done steps", async () => {
      const namespace = `p-${randomUUID()}`;
      const a = spawnMachine({ url: cluster.url, namespace, slug: "job", steps: 6, stepMs: 2_500, leaseMs: 5_000, mode: "workflow" });
      await a.waitFor((e) => e.ev === "run" && e.i === 1);
      const filed = await requestFromAnotherProcess({ url: cluster.url, namespace, slug: "job", signal: "pause", reason: "deploy freeze" });
      const filedAt = Date.now();
      expect(filed).toMatchObject({ ok: true, request: { signal: "pause", reason: "deploy freeze" } });
      expect(filed.request?.requestedBy.pid).not.toBe(a.proc.pid);
      expect(await a.exited).toBe(0);
      expect(a.events.at(-1)).toMatchObject({ ev: "end", status: "paused" });
      // The step in flight when the request landed finished; no step started after it (2.5 s steps, 6 of them).
      const before = ran(a.events);
      expect(before.length).toBeGreaterThanOrEqual(2);
      expect(before.length).toBeLessThan(6);
      expect(a.events.filter((e) => e.ev === "run" && e.t > filedAt)).toEqual([]);
      // Paused on the database, the journal says so, and the honoured request is gone.
      expect(await row(namespace, "job")).toMatchObject({ status: "paused", control: [] });
      expect((await row(namespace, "job")).events).toContain("paused");
      // A pause of a run nobody runs now is refused (it would pause the next resume).
      expect(await requestFromAnotherProcess({ url: cluster.url, namespace, slug: "job", signal: "pause", reason: "again" })).toMatchObject({ ok: false, code: "NOT_RUNNING" });
      const b = spawnMachine({ url: cluster.url, namespace, slug: "job", steps: 6, stepMs: 50, leaseMs: 5_000, mode: "workflow" });
      expect(await b.exited).toBe(0);
      expect(b.events.at(-1)).toMatchObject({ ev: "end", status: "completed" });
      expect(ran(b.events)).toEqual([0, 1, 2, 3, 4, 5].slice(before.length));
    });

    it("a stop filed from another process aborts the in-flight step and ends the run cancelled; a pending pause is dropped", async () => {
      const namespace = `s-${randomUUID()}`;
      const a = spawnMachine({ url: cluster.url, namespace, slug: "job", steps: 4, stepMs: 20_000, leaseMs: 5_000, mode: "workflow" });
      await a.waitFor((e) => e.ev === "run" && e.i === 0);
      const started = Date.now();
      // Both filed while step 0 runs (the pause waits for the step boundary): the stop outranks the pause, and the
      // pause is moot once the run is over.
      const pause = await requestFromAnotherProcess({ url: cluster.url, namespace, slug: "job", signal: "pause", reason: "lunch" });
      const stop = await requestFromAnotherProcess({ url: cluster.url, namespace, slug: "job", signal: "stop", reason: "wrong branch" });
      expect([pause.ok, stop.ok]).toEqual([true, true]);
      expect(await a.exited).toBe(0);
      // The 20 s step did not run to its end: its signal was aborted by the stop (polled every 250 ms).
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(a.events.some((e) => e.ev === "ran")).toBe(false);
      expect(a.events.at(-1)).toMatchObject({ ev: "end", status: "cancelled" });
      expect(await row(namespace, "job")).toMatchObject({ status: "cancelled", failureReason: "wrong branch", control: [] });
      expect((await row(namespace, "job")).events).toContain("stopped");
      // A finished run takes no more requests.
      expect(await requestFromAnotherProcess({ url: cluster.url, namespace, slug: "job", signal: "stop", reason: "again" })).toMatchObject({ ok: false, code: "RUN_FINISHED" });
    });
  });
}
