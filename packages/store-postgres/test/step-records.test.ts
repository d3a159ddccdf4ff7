/**
 * What PostgreSQL stores for a step or a commit obeys the fs store's rules: a failed step's error text is capped
 * and sanitized exactly as the run log does it, and commit records are validated by the same schema.
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { openRunLog } from "@phasekit/adapters-pi/plan-folder";
import { sampleMetadata } from "../../adapters-pi/test/helpers/metadata-fixtures.js";
import { startCluster } from "./helpers/cluster.js";
import { storeSetup } from "./helpers/stores.js";

const started = startCluster();

if (!started.ok) {
  describe.skip(`postgres step records (SKIPPED: ${started.reason})`, () => it("needs PostgreSQL", () => undefined));
} else {
  const { cluster } = started;
  const { open, admin } = storeSetup(cluster);
  /** A held run's checkpoint store, and a way to see the rows it wrote. */
  const held = async () => {
    const ns = `rec-${randomUUID()}`;
    const store = await open(ns);
    const l = await store.lock("run", { owner: { tool: "rec" } });
    if (!l.ok) throw l.error;
    const holder = l.lock.store;
    await holder.writeMetadata("run", sampleMetadata("run", 0), null);
    const cps = await holder.checkpoints("run", { now: () => new Date() });
    const rows = async (table: "phasekit_steps" | "phasekit_commits") =>
      (await admin.query(`SELECT record FROM ${table} WHERE namespace = $1`, [ns])).rows.map((r) => r.record as Record<string, unknown>);
    return { cps, rows };
  };
  /** The error text the fs run log stores for a step that throws `error`. */
  const fsErrorText = async (error: unknown): Promise<string | undefined> => {
    const log = await openRunLog({ runDir: mkdtempSync(path.join(tmpdir(), "phasekit-pg-rec-")) });
    try {
      await log.step("s", {}, () => Promise.reject(error)).catch(() => undefined);
      return log.entry("s")?.error;
    } finally {
      await log.close();
    }
  };

  describe("postgres step and commit records", () => {
    it("caps a failed step's error text exactly as the fs run log does", async () => {
      const { cps, rows } = await held();
      const error = new TypeError("x".repeat(25_000));
      await expect(cps.step("s", {}, () => Promise.reject(error))).rejects.toBe(error);
      const [record] = await rows("phasekit_steps");
      expect(record).toMatchObject({ status: "failed" });
      expect((record?.error as string).length).toBe(10_000);
      expect(record?.error).toBe(await fsErrorText(error));
    });

    it("stores the failure of a step whose error text holds a NUL or a lone surrogate (PostgreSQL refused it)", async () => {
      const { cps, rows } = await held();
      for (const [id, text] of [["with-nul", "bad\u0000byte"], ["high", "lone \ud800 high"], ["low", "lone \udfff low"], ["end", `${"y".repeat(9_992)}\ud83d\ude00`]] as const) {
        const error = new Error(text);
        await expect(cps.step(id, {}, () => Promise.reject(error))).rejects.toBe(error);
        const record = (await rows("phasekit_steps")).find((r) => r.stepId === id);
        expect(record).toMatchObject({ status: "failed", error: await fsErrorText(error) });
        expect(record?.error).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/);
        expect(record?.error).not.toContain("\u0000");
      }
    });

    it("validates commit records with the fs store's schema: nothing invalid reaches the table", async () => {
      const { cps, rows } = await held();
      const bad = [
        { id: "c1", message: 42, files: [] },
        { id: "c2", message: "m".repeat(100_001), files: [] },
        { id: "c3", message: "m", files: [""] },
        { id: "c4", message: "m", files: "a.ts" },
      ];
      for (const intent of bad) {
        await expect(cps.recordCommitIntent(intent as never)).rejects.toMatchObject({ name: "WorkflowError", code: "INVALID_OPTIONS", details: { field: expect.any(String) } });
      }
      await cps.recordCommitIntent({ id: "ok", message: "m", files: ["a.ts"] });
      await expect(cps.markCommitted("ok", { sha: "not a sha" })).rejects.toMatchObject({ code: "INVALID_OPTIONS", details: { field: "sha" } });
      expect((await rows("phasekit_commits")).map((r) => [r.id, r.status])).toEqual([["ok", "intended"]]);
      expect(await cps.markCommitted("ok", { sha: "abc1234" })).toMatchObject({ status: "committed", sha: "abc1234" });
    });

    it("reads a damaged commit row as CORRUPT_FILE naming the run and the row, as the fs store names the segment and byte", async () => {
      const { cps } = await held();
      await cps.recordCommitIntent({ id: "c1", message: "m", files: ["a.ts"] });
      await cps.recordCommitIntent({ id: "c2", message: "m", files: ["b.ts"] });
      // Written behind phasekit's back (an operator's UPDATE, a restore of another version): no writer makes it.
      await admin.query(`UPDATE phasekit_commits SET record = record || '{"status": "pushed"}'::jsonb WHERE commit_id = 'c2'`);
      const damaged = { code: "CORRUPT_FILE", message: expect.stringContaining('commit record "c2" in row "c2"'), details: { file: expect.stringMatching(/^postgres:rec-.*\/run\/checkpoints$/), row: "c2", field: "status" } };
      // The holder's store loaded before the UPDATE knows only what it wrote; a fresh reader and a fresh holder read the row.
      const namespace = cps.file.slice("postgres:".length).split("/")[0] as string;
      const again = await open(namespace);
      await expect((await again.checkpoints("run", { now: () => new Date() })).commits()).rejects.toMatchObject(damaged);
    });
  });
}
