/**
 * Ids and text as the file store has them: a new run id is reserved in the database, so two machines that draw
 * the same id get different runs; text jsonb refuses (NUL, a cut emoji) is made storable by the one rule
 * (adapters-pi's storableText), so a run that fails with such an error ends `failed`; retention ages runs by the
 * database's clock, not the writer's.
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runWorkflow } from "@phasekit/adapters-pi";
import { sampleMetadata } from "../../adapters-pi/test/helpers/metadata-fixtures.js";
import type { PostgresPlanStore } from "../src/index.js";
import { startCluster } from "./helpers/cluster.js";
import { storeSetup } from "./helpers/stores.js";

const started = startCluster();

if (!started.ok) {
  describe.skip(`postgres ids and text (SKIPPED: ${started.reason})`, () => it("needs PostgreSQL", () => undefined));
} else {
  const { cluster } = started;
  const { open, admin } = storeSetup(cluster);
  const repoRoot = () => mkdtempSync(path.join(tmpdir(), "phasekit-pg-ids-"));

  describe("postgres: ids and text as the file store has them", () => {
    it("runWorkflow without a target takes its new id from the database's reservation, not from the local disk alone", async () => {
      const store = await open(`ids-rw-${randomUUID()}`);
      const reserved: string[] = [];
      const counting = Object.create(store, {
        reserveRun: {
          value: async () => {
            const r = await store.reserveRun();
            if (r.ok) reserved.push(r.slug);
            return r;
          },
        },
      }) as PostgresPlanStore;
      const r = await runWorkflow({ repoRoot: repoRoot(), toolName: "t", store: counting }, async (ctx) => ctx.step("a", {}, () => 1));
      expect(reserved).toHaveLength(1);
      expect(r.slug).toBe(reserved[0]);
      expect(r.status).toBe("completed");
    });

    it("two machines forced to draw the same new id get two different runs (the database reserves it)", async () => {
      const ns = `ids-${randomUUID()}`;
      const machineA = await open(ns);
      const machineB = await open(ns);
      // Both machines' random sources start with the same bytes; B's second draw differs.
      const source = (): ((n: number) => Uint8Array) => {
        let draw = 0;
        return (n) => new Uint8Array(n).fill(draw++ === 0 ? 7 : 11);
      };
      const a = await machineA.reserveRun(source());
      const b = await machineB.reserveRun(source());
      if (!a.ok || !b.ok) throw new Error("reservation failed");
      expect(a.slug).toBe("77777777");
      expect(b.slug).toBe("bbbbbbbb");
      // A's reserved run is A's: B running its own id starts fresh, never resumes A's output.
      const ranA = await runWorkflow({ repoRoot: repoRoot(), toolName: "t", target: a.slug, store: machineA }, (ctx) => ctx.step("s", {}, () => "by A"));
      const ranB = await runWorkflow({ repoRoot: repoRoot(), toolName: "t", target: b.slug, store: machineB }, (ctx) => ctx.step("s", {}, () => "by B"));
      expect([ranA, ranB]).toMatchObject([{ status: "completed", result: "by A" }, { status: "completed", result: "by B" }]);
      // A random source that always repeats a taken id: MAX_ATTEMPTS_REACHED, typed.
      expect(await machineB.reserveRun(() => new Uint8Array(16).fill(7))).toMatchObject({ ok: false, error: { code: "MAX_ATTEMPTS_REACHED" } });
    });

    it("a run whose error holds a NUL, or an emoji cut at the 10,000-character limit, ends failed (not left running)", async () => {
      const store = await open(`text-${randomUUID()}`);
      const nul = await runWorkflow({ repoRoot: repoRoot(), toolName: "t", target: "nul-text", store }, async () => {
        throw new Error("bad byte \u0000 here");
      }).catch((e: unknown) => e);
      expect(nul).toBeInstanceOf(Error);
      const cut = await runWorkflow({ repoRoot: repoRoot(), toolName: "t", target: "emoji", store }, async () => {
        throw new Error(`${"e".repeat(9_990)}😀😀😀😀😀😀😀😀`);
      }).catch((e: unknown) => e);
      expect(cut).toBeInstanceOf(Error);
      for (const slug of ["nul-text", "emoji"]) {
        const m = await store.readMetadata(slug);
        expect(m).toMatchObject({ ok: true, metadata: { status: "failed" } });
      }
    });

    it("journal data, commit messages and phases with a NUL or a lone surrogate are stored (U+FFFD), not refused", async () => {
      const store = await open(`odd-${randomUUID()}`);
      const held = await store.lock("run", { owner: { tool: "t" } });
      if (!held.ok) throw held.error;
      const w = held.lock.store;
      expect(await w?.writeMetadata("run", { ...sampleMetadata("run", 0), phase: "plan \u0000 \ud83d" }, null)).toMatchObject({ ok: true, metadata: { phase: "plan \uFFFD \uFFFD" } });
      expect(await w?.appendJournal("run", { generation: 1, at: new Date().toISOString(), event: "note", data: { text: "a\u0000b", ["k\u0000"]: 1 } })).toMatchObject({
        ok: true,
        entry: { data: { text: "a\uFFFDb", ["k\uFFFD"]: 1 } },
      });
      const cps = await w?.checkpoints("run", { now: () => new Date() });
      expect(await cps?.recordCommitIntent({ id: "c1", message: "fix \ud800 it", files: [] })).toMatchObject({ id: "c1" });
      expect((await cps?.commits())?.[0]).toMatchObject({ message: "fix \uFFFD it" });
      await held.lock.release();
    });

    it("retention ages runs by the database's clock: a writer an hour behind does not make its fresh run look old", async () => {
      const ns = `gc-${randomUUID()}`;
      const store = await open(ns);
      const behind = () => new Date(Date.now() - 3_600_000);
      await runWorkflow({ repoRoot: repoRoot(), toolName: "t", target: "fresh", store, clock: behind }, (ctx) => ctx.step("s", {}, () => 1));
      const report = await store.gc({ olderThan: 30 * 60_000, now: () => new Date() });
      expect(report.removed).toEqual([]);
      expect(report.kept).toMatchObject([{ slug: "fresh", reason: "within-limits" }]);
      // Aged on the database's clock, it goes.
      await admin.query("UPDATE phasekit_runs SET written_at = now() - interval '2 hours' WHERE namespace = $1", [ns]);
      expect((await store.gc({ olderThan: 30 * 60_000, now: () => new Date() })).removed).toMatchObject([{ slug: "fresh", reason: "older-than" }]);
    });
  });
}
