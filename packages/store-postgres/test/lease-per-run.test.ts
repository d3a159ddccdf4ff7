/**
 * Fencing belongs to a lease, never to a store object: two runs of one slug through ONE store object each write
 * under their own lease's epoch, so the displaced run's late writes are refused even though its store now holds
 * (or has just released) the newer lease.
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runWorkflow } from "@phasekit/adapters-pi";
import { sampleMetadata } from "../../adapters-pi/test/helpers/metadata-fixtures.js";
import { startCluster } from "./helpers/cluster.js";
import { storeSetup } from "./helpers/stores.js";

const started = startCluster();

if (!started.ok) {
  describe.skip(`postgres lease fencing (SKIPPED: ${started.reason})`, () => it("needs PostgreSQL", () => undefined));
} else {
  const { cluster } = started;
  const { open, admin, expire } = storeSetup(cluster);
  const stepRow = async (namespace: string, stepId: string) =>
    (await admin.query("SELECT record FROM phasekit_steps WHERE namespace = $1 AND step_id = $2", [namespace, stepId])).rows[0]?.record as Record<string, unknown> | undefined;

  describe("postgres: one lease, one fence", () => {
    it("two runWorkflow calls on one run through one store: the displaced run's late step is refused", async () => {
      const ns = `two-${randomUUID()}`;
      const store = await open(ns);
      const repoRoot = mkdtempSync(path.join(tmpdir(), "phasekit-pg-two-"));
      let finishA!: () => void;
      const gate = new Promise<void>((r) => (finishA = r));
      let entered!: () => void;
      const inside = new Promise<void>((r) => (entered = r));
      let stepErrorA: unknown;
      const runA = runWorkflow({ repoRoot, toolName: "t", target: "run", store }, async (ctx) => {
        try {
          // Deaf to the abort signal, like a body that ignores it: its result reaches the store late.
          await ctx.step("s1", { n: 1 }, async () => (entered(), await gate, { by: "a" }));
        } catch (error) {
          stepErrorA = error;
          throw error;
        }
        return "a";
      }).then(
        (r) => ({ ok: true as const, r }),
        (e: unknown) => ({ ok: false as const, e }),
      );
      await inside;
      await expire(ns, "run");
      const b = await runWorkflow({ repoRoot, toolName: "t", target: "run", store }, async (ctx) => ctx.step("s1", { n: 1 }, () => ({ by: "b" })));
      expect(b).toMatchObject({ status: "completed", result: { by: "b" } });
      const acknowledged = await stepRow(ns, "s1");
      finishA();
      const a = await runA;
      expect(stepErrorA).toMatchObject({ code: "LOCK_LOST" });
      expect(a).toMatchObject({ ok: false, e: { code: "LOCK_LOST" } });
      // The completed run's acknowledged step is untouched, and a later run reuses B's output.
      expect(await stepRow(ns, "s1")).toEqual(acknowledged);
      const c = await runWorkflow({ repoRoot, toolName: "t", target: "run", store, reenter: true }, async (ctx) => ctx.step("s1", { n: 1 }, () => ({ by: "c" })));
      expect(c).toMatchObject({ status: "completed", result: { by: "b" } });
    });

    it("each lease's store fences by that lease: the older one is refused, the newer one accepted", async () => {
      const ns = `view-${randomUUID()}`;
      const store = await open(ns);
      const la = await store.lock("run", { owner: { tool: "a" } });
      if (!la.ok) throw la.error;
      const viewA = la.lock.store;
      expect(await viewA.writeMetadata("run", sampleMetadata("run", 0), null)).toMatchObject({ ok: true });
      const cpsA = await viewA.checkpoints("run", { now: () => new Date() });
      await expire(ns, "run");
      const lb = await store.lock("run", { owner: { tool: "b" } });
      if (!lb.ok) throw lb.error;
      const viewB = lb.lock.store;
      await expect(cpsA.step("s", {}, () => ({ by: "a" }))).rejects.toMatchObject({ code: "LOCK_LOST" });
      expect(await viewA.writeMetadata("run", sampleMetadata("run", 1), 1)).toMatchObject({ ok: false, error: { code: "LOCK_LOST" } });
      expect(await viewA.appendJournal("run", { generation: 1, at: "2026-01-01T00:00:00.000Z", event: "late" })).toMatchObject({ ok: false, error: { code: "LOCK_LOST" } });
      const cpsB = await viewB.checkpoints("run", { now: () => new Date() });
      expect(await cpsB.step("s", {}, () => ({ by: "b" }))).toMatchObject({ reused: false, output: { by: "b" } });
      expect(await viewB.writeMetadata("run", sampleMetadata("run", 1), 1)).toMatchObject({ ok: true });
      expect(await lb.lock.release()).toEqual({ ok: true, released: true });
      // Released: nobody holds the run, yet the displaced lease is still refused (it never becomes "no holder").
      await expect(cpsA.step("s2", {}, () => ({ by: "a" }))).rejects.toMatchObject({ code: "LOCK_LOST" });
      expect(await viewA.writeMetadata("run", sampleMetadata("run", 2), 2)).toMatchObject({ ok: false, error: { code: "LOCK_LOST" } });
      expect((await stepRow(ns, "s"))?.status).toBe("completed");
      expect(await stepRow(ns, "s2")).toBeUndefined();
    });
  });
}
