/**
 * What a reader's look costs on PostgreSQL, counted (not timed): `phasekit list` takes every run with its lease
 * and step facts in one statement (`listRunFacts`; it took one for the list and two per run, the second reading
 * every step record), and gives the same facts the two-reads-per-run path gives; the inspector's change check
 * (`runSignature`) is one statement that changes with every change a reader can see, and not with a renewal.
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, describe, expect, it, vi } from "vitest";
import { runWorkflow } from "@phasekit/adapters-pi";
import { storeRunFacts } from "../../adapters-pi/src/cli/store-runs.js";
import { openPostgresPlanStore, type PostgresPlanStore } from "../src/index.js";
import { startCluster } from "./helpers/cluster.js";
import { countingPool } from "./helpers/counting-pool.js";
import { expireLease } from "./helpers/stores.js";
import { sampleMetadata } from "../../adapters-pi/test/helpers/metadata-fixtures.js";

const started = startCluster();

if (!started.ok) {
  describe.skip(`postgres reader statements (SKIPPED: ${started.reason})`, () => it("needs PostgreSQL", () => undefined));
} else {
  const { cluster } = started;
  const namespace = `rs-${randomUUID().slice(0, 8)}`;
  const counted = countingPool(cluster.url);
  const admin = new pg.Pool({ connectionString: cluster.url, max: 1 });
  const stores: PostgresPlanStore[] = [];
  const open = async () => {
    const s = await openPostgresPlanStore({ pool: counted.pool, namespace, leaseMs: 60_000 });
    stores.push(s);
    return s;
  };
  afterAll(async () => {
    for (const s of stores) await s.close();
    await counted.pool.end();
    await admin.end();
    cluster.destroy();
  });

  describe("postgres readers: statements per look", () => {
    it("list: one statement for every run, with the same leases and step facts as two reads per run", async () => {
      const store = await open();
      const repoRoot = mkdtempSync(path.join(tmpdir(), "phasekit-pg-readers-"));
      await runWorkflow({ repoRoot, target: "done", toolName: "t", store }, async (ctx) => {
        for (let i = 0; i < 5; i++) await ctx.step(`s${i}`, { i }, () => i);
        return "ok";
      });
      await runWorkflow({ repoRoot, target: "failed", toolName: "t", store }, async (ctx) => {
        await ctx.step("a", {}, () => 1);
        await ctx.step("b", {}, () => {
          throw new Error("boom");
        });
      }).catch(() => undefined);
      const reserved = store.reserveRun === undefined ? null : await store.reserveRun();
      expect(reserved?.ok).toBe(true);
      // A live holder with a step in flight.
      let inFlight!: () => void;
      const entered = new Promise<void>((r) => (inFlight = r));
      let let_go!: () => void;
      const gate = new Promise<void>((r) => (let_go = r));
      const live = runWorkflow({ repoRoot, target: "live", toolName: "t", store }, async (ctx) => {
        await ctx.step("first", {}, () => 1);
        await ctx.step("second", {}, async () => (inFlight(), await gate, 2));
        return "done";
      });
      await entered;
      // Its `started` record goes out on the turn after the body began: readers see the step in flight once it lands.
      const status = async () => (await admin.query("SELECT record->>'status' AS s FROM phasekit_steps WHERE namespace = $1 AND slug = 'live' AND step_id = 'second'", [namespace])).rows[0]?.s;
      await vi.waitFor(async () => expect(await status()).toBe("started"), { timeout: 30_000, interval: 10 });

      const at = counted.texts.length;
      const facts = await storeRunFacts(store);
      expect(counted.texts.length - at).toBe(1);
      const before = counted.texts.length;
      const oneByOne = await storeRunFacts({ ...store, listRunFacts: undefined });
      const perRun = counted.texts.length - before;
      expect(perRun).toBeGreaterThanOrEqual(1 + 2 * facts.length);
      expect(facts).toEqual(oneByOne);
      const bySlug = new Map(facts.map((f) => [f.slug, f]));
      expect(bySlug.get("done")).toMatchObject({ ok: true, lease: null, steps: { current: null, last: "s4" } });
      expect(bySlug.get("failed")).toMatchObject({ steps: { current: null, last: "a" } });
      expect(bySlug.get("live")).toMatchObject({ lease: { live: true, owner: { tool: "t", pid: process.pid } }, steps: { current: "second", last: "first" } });
      expect(bySlug.get(reserved?.ok ? reserved.slug : "")).toMatchObject({ ok: true, metadata: null, lease: null });
      let_go();
      await live;
    });

    it("runSignature: one statement; changes with a step, the journal, a request, the holder and its lease going stale, not with a renewal", async () => {
      const store = await open();
      const sig = async () => {
        const at = counted.texts.length;
        const s = await (store.runSignature as (slug: string) => Promise<string>)("watched");
        expect(counted.texts.length - at).toBe(1);
        return s;
      };
      expect(await sig()).toBe("-");
      const locked = await store.lock("watched", { owner: { tool: "w" } });
      if (!locked.ok) throw locked.error;
      const holder = locked.lock.store as PostgresPlanStore;
      const seen = [await sig()];
      const changes = async (what: string) => {
        const s = await sig();
        expect(seen, what).not.toContain(s);
        seen.push(s);
      };
      const w = await holder.writeMetadata("watched", sampleMetadata("watched", 0), null);
      expect(w.ok, JSON.stringify(w)).toBe(true);
      await changes("metadata written");
      const cps = await holder.checkpoints("watched", { now: () => new Date() });
      await cps.step("one", {}, () => 1);
      // Counted by the holder just after it landed (write-count.ts).
      await vi.waitFor(() => changes("a step completed"), { timeout: 10_000, interval: 5 });
      expect(await holder.appendJournal("watched", { generation: 1, at: new Date().toISOString(), event: "note" })).toMatchObject({ ok: true });
      await changes("a journal entry");
      const filed = await store.requestControl("watched", "pause", { reason: "look" });
      expect(filed.ok).toBe(true);
      await changes("a pause filed");
      // A renewal moves lease_until only: no change.
      const renewed = await admin.query("UPDATE phasekit_runs SET lease_until = lease_until + interval '1 minute' WHERE namespace = $1 AND slug = 'watched'", [namespace]);
      expect(renewed.rowCount).toBe(1);
      expect(await sig()).toBe(seen.at(-1));
      await cps.supersede?.("one", {});
      await vi.waitFor(() => changes("a record flagged superseded"), { timeout: 10_000, interval: 5 });
      await expireLease(admin, namespace, "watched");
      await changes("the lease gone stale");
      await admin.query("UPDATE phasekit_runs SET lease_until = now() + interval '1 minute' WHERE namespace = $1 AND slug = 'watched'", [namespace]);
      await locked.lock.release();
      await changes("the holder gone");
    });
  });
}
