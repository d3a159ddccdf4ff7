/**
 * The server goes away mid-step (stopped with `pg_ctl -m immediate`, like a crash or a lost network) and comes
 * back: the run ends with a typed error, resumes cleanly, and no acknowledged step is lost.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { randomUUID } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { runWorkflow } from "@phasekit/adapters-pi";
import { openPostgresPlanStore } from "../src/index.js";
import { startCluster } from "./helpers/cluster.js";

const started = startCluster();

if (!started.ok) {
  describe.skip(`postgres connection loss (SKIPPED: ${started.reason})`, () => it("needs PostgreSQL", () => undefined));
} else {
  const { cluster } = started;
  afterAll(() => cluster.destroy());

  describe("postgres store: connection loss", () => {
    it("a holder that cannot reach the server for its lease aborts its signal with WRITE_FAILED (connectionLost), not LOCK_LOST: nobody took the run", async () => {
      const store = await openPostgresPlanStore({ connectionString: cluster.url, namespace: `h-${randomUUID()}`, leaseMs: 600 });
      const got = await store.lock("run", { owner: { tool: "t" } });
      if (!got.ok) throw got.error;
      cluster.stop("immediate");
      try {
        await new Promise((r) => got.lock.signal.addEventListener("abort", r, { once: true }));
        expect(got.lock.signal.reason).toMatchObject({ code: "WRITE_FAILED", details: { connectionLost: true, taken: false, field: "lease" } });
        await expect(got.lock.assertHeld()).rejects.toMatchObject({ code: "WRITE_FAILED" });
      } finally {
        cluster.start();
        await store.close();
      }
    });

    it("server stopped mid-step: typed error naming the lost connection; after restart the run resumes, acknowledged steps reused", async () => {
      const namespace = `l-${randomUUID()}`;
      const repoRoot = mkdtempSync(path.join(tmpdir(), "phasekit-pgloss-"));
      const leaseMs = 1_500;
      const store = await openPostgresPlanStore({ connectionString: cluster.url, namespace, leaseMs });
      const ran: string[] = [];
      const options = { repoRoot, toolName: "t", target: "lossy", store, lock: { staleMs: leaseMs, retries: 50 }, onHookFailure: () => undefined };
      const first = await runWorkflow(options, async (ctx) => {
        await ctx.step("s0", {}, () => (ran.push("s0"), { a: 0 }));
        await ctx.step("s1", {}, () => {
          ran.push("s1");
          cluster.stop("immediate");
          return { a: 1 };
        });
        await ctx.step("s2", {}, () => (ran.push("s2"), { a: 2 }));
        return "done";
      }).then(
        () => null,
        (e: unknown) => e,
      );
      expect(first).toMatchObject({ name: "WorkflowError", code: "WRITE_FAILED", details: { connectionLost: true } });
      expect(ran).toEqual(["s0", "s1"]);

      cluster.start();
      // The dead holder's lease runs out on the database's clock; the next runner waits for it (lock retries).
      const second = await runWorkflow(options, async (ctx) => {
        await ctx.step("s0", {}, () => (ran.push("s0 again"), { a: 0 }));
        await ctx.step("s1", {}, () => (ran.push("s1 again"), { a: 1 }));
        await ctx.step("s2", {}, () => (ran.push("s2"), { a: 2 }));
        return "done";
      });
      await store.close();
      expect(second.status).toBe("completed");
      expect(ran).toEqual(["s0", "s1", "s1 again", "s2"]);
      if (second.status !== "completed") return;
      expect(second.steps.map((s) => s.outcome)).toEqual(["reused", "ran", "ran"]);
      // s1's unacknowledged `started` record may or may not have reached the disk before the crash.
      expect(["started", "no-record"]).toContain((second.steps[1] as { reason: string }).reason);
    });
  });
}
