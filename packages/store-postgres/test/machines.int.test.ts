/**
 * Several processes standing in for machines (separate processes, separate connections) run the same workflow
 * against one real PostgreSQL server.
 */
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { startCluster } from "./helpers/cluster.js";
import { storeSetup } from "./helpers/stores.js";
import { spawnMachine, type Machine, type MachineEvent } from "./helpers/spawn-machine.js";

const started = startCluster();
const STEPS = 4;

if (!started.ok) {
  describe.skip(`postgres machines (SKIPPED: ${started.reason})`, () => it("needs PostgreSQL", () => undefined));
} else {
  const { cluster } = started;
  const { admin: pool } = storeSetup(cluster);
  const stepRows = async (namespace: string, slug: string): Promise<Map<string, { by: number; epoch: number; status: string }>> => {
    const r = await pool.query<{ step_id: string; record: { status: string; outputFingerprint?: string }; epoch: string; body: string | null }>(
      `SELECT s.step_id, s.record, s.epoch, a.body FROM phasekit_steps s
       LEFT JOIN phasekit_artifacts a ON a.namespace = s.namespace AND a.slug = s.slug AND a.fingerprint = s.record->>'outputFingerprint'
       WHERE s.namespace = $1 AND s.slug = $2`,
      [namespace, slug],
    );
    return new Map(r.rows.map((x) => [x.step_id, { by: x.body === null ? -1 : (JSON.parse(x.body) as { by: number }).by, epoch: Number(x.epoch), status: x.record.status }]));
  };
  const runsOf = (ms: Machine[]): MachineEvent[] => ms.flatMap((m) => m.events).filter((e) => e.ev === "run");

  describe("postgres store across machines", () => {
    it("three machines start the same workflow at once: one holds it at a time, each step runs exactly once", async () => {
      const namespace = `m-${randomUUID()}`;
      const ms = [0, 1, 2].map(() => spawnMachine({ url: cluster.url, namespace, slug: "shared", steps: STEPS, stepMs: 150, leaseMs: 2_000, mode: "workflow" }));
      const codes = await Promise.all(ms.map((m) => m.exited));
      expect(codes).toEqual([0, 0, 0]);
      for (const m of ms) expect(m.events.at(-1)).toMatchObject({ ev: "end", status: "completed" });
      // Every step body ran once in all, and the holders' spans (first to last event while locked) never overlap.
      expect(runsOf(ms).map((e) => e.i).sort()).toEqual([0, 1, 2, 3]);
      const spans = ms.map((m) => [m.events.find((e) => e.ev === "locked")?.t ?? 0, m.events.at(-1)?.t ?? 0] as const).sort((a, b) => a[0] - b[0]);
      for (let k = 1; k < spans.length; k++) expect(spans[k]![0]).toBeGreaterThanOrEqual(spans[k - 1]![1]);
    });

    it("SIGKILL the holder: another machine resumes once the lease runs out, reusing the completed steps", async () => {
      const namespace = `k-${randomUUID()}`;
      const a = spawnMachine({ url: cluster.url, namespace, slug: "killed", steps: STEPS, stepMs: 300, leaseMs: 1_000, mode: "workflow" });
      await a.waitFor((e) => e.ev === "run" && e.i === 2);
      a.proc.kill("SIGKILL");
      await a.exited;
      const b = spawnMachine({ url: cluster.url, namespace, slug: "killed", steps: STEPS, stepMs: 50, leaseMs: 1_000, mode: "workflow" });
      expect(await b.exited).toBe(0);
      expect(b.events.at(-1)).toMatchObject({ ev: "end", status: "completed" });
      // Steps 0 and 1 were acknowledged by A: B reuses them and runs only 2 and 3.
      expect(runsOf([b]).map((e) => e.i)).toEqual([2, 3]);
      const rows = await stepRows(namespace, "killed");
      expect([...rows.values()].every((r) => r.status === "completed")).toBe(true);
      expect([rows.get("s0")?.by, rows.get("s1")?.by, rows.get("s2")?.by]).toEqual([a.proc.pid, a.proc.pid, b.proc.pid]);
    });

    it("SIGSTOP the holder past its lease: another takes over, and the old holder's late write is refused by the database", async () => {
      const namespace = `s-${randomUUID()}`;
      const a = spawnMachine({ url: cluster.url, namespace, slug: "stopped", steps: STEPS, stepMs: 400, leaseMs: 800, mode: "raw" });
      await a.waitFor((e) => e.ev === "run" && e.i === 1);
      a.proc.kill("SIGSTOP");
      const b = spawnMachine({ url: cluster.url, namespace, slug: "stopped", steps: STEPS, stepMs: 20, leaseMs: 800, mode: "raw" });
      expect(await b.exited).toBe(0);
      const before = await stepRows(namespace, "stopped");
      a.proc.kill("SIGCONT");
      expect(await a.exited).toBe(0);
      const late = a.events.at(-1);
      // A finished its step body after B completed the run: its completed record carried the old epoch, and
      // the database refused it (or A's heartbeat, awake first, had already found the run taken).
      expect(late).toMatchObject({ ev: "error", code: "LOCK_LOST" });
      expect(late?.message).toMatch(/step s1 \(completed\) refused: epoch 1 was displaced|lease of epoch 1 is lost: another holder took the run/);
      const after = await stepRows(namespace, "stopped");
      expect(after).toEqual(before);
      expect(after.get("s1")).toMatchObject({ by: b.proc.pid, epoch: 2, status: "completed" });
      expect(after.get("s0")).toMatchObject({ by: a.proc.pid, epoch: 1 });
    });
  });
}
