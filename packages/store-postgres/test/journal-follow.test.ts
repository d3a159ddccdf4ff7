/**
 * Following a run kept in PostgreSQL reads each journal row once: `watchRun` (what `phasekit journal --follow`
 * and the inspector share) asks the store only for the rows past the last seq it saw, so the rows the journal
 * statements return add up to the journal, not to the journal once per look. Counted at the driver, not timed;
 * the run is moved on only after the watcher has shown the entry before.
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { watchRun } from "../../adapters-pi/src/cli/watch-run.js";
import { closeStores } from "../../adapters-pi/src/cli/store-runs.js";
import { sampleMetadata } from "../../adapters-pi/test/helpers/metadata-fixtures.js";
import { openPostgresPlanStore } from "../src/index.js";
import { startCluster } from "./helpers/cluster.js";

const started = startCluster();

if (!started.ok) {
  describe.skip(`postgres journal follow (SKIPPED: ${started.reason})`, () => it("needs PostgreSQL", () => undefined));
} else {
  const { cluster } = started;
  afterAll(async () => {
    await closeStores();
    cluster.destroy();
  });

  describe("postgres: a follower reads each journal row once", () => {
    it("watchRun over 30 generations: the journal statements return each row once, however many looks", async () => {
      const namespace = `follow-${randomUUID().slice(0, 8)}`;
      const driver = await openPostgresPlanStore({ connectionString: cluster.url, namespace });
      const l = await driver.lock("followed", { owner: { tool: "driver" } });
      if (!l.ok) throw l.error;
      const via = l.lock.store ?? driver;
      let generation: number | null = null;
      let i = 0;
      const write = async (status: "running" | "completed") => {
        const w = await via.writeMetadata("followed", { ...sampleMetadata("followed", i, 2000), status }, generation);
        if (!w.ok) throw w.error;
        generation = w.metadata.generation;
      };
      const next = async () => {
        i++;
        await write("running");
        const e = await via.appendJournal("followed", { generation: generation ?? 0, at: new Date().toISOString(), event: `tick-${i}`, data: { i } });
        if (!e.ok) throw e.error;
      };
      await write("running");
      await next();

      // Every row a journal read returns, whoever reads (the driver reads none). Counted at the connection, which
      // every statement reaches (through the pool, or on the connection a store's own pool keeps between
      // statements), each with a callback there.
      const rows = { looks: 0, returned: 0 };
      type Reply = (error: unknown, result?: { rowCount: number | null }) => void;
      const proto = pg.Client.prototype as unknown as { query: (...a: unknown[]) => unknown };
      const original = proto.query;
      proto.query = function (this: unknown, ...a: unknown[]) {
        const first = a[0] as string | { text?: unknown } | undefined;
        const text = typeof first === "string" ? first : first?.text;
        const reply = a.at(-1);
        if (typeof text !== "string" || !text.startsWith("SELECT entry FROM phasekit_journal") || typeof reply !== "function") return original.apply(this, a);
        rows.looks++;
        a[a.length - 1] = ((error, result) => {
          if (error === undefined || error === null) rows.returned += result?.rowCount ?? 0;
          (reply as Reply)(error, result);
        }) satisfies Reply;
        return original.apply(this, a);
      };
      try {
        let ticks = 0;
        const url = `${cluster.url}${cluster.url.includes("?") ? "&" : "?"}namespace=${namespace}`;
        for await (const e of watchRun("followed", { repoRoot: mkdtempSync(path.join(tmpdir(), "pk-pg-follow-")), store: url, intervalMs: 1 })) {
          if (e.type !== "event" || !e.event.startsWith("tick-")) continue;
          ticks++;
          if (ticks < 30) await next();
          else {
            i++;
            await write("completed");
            await l.lock.release();
          }
        }
        expect(ticks).toBe(30);
      } finally {
        proto.query = original;
      }
      const all = await driver.readJournal("followed");
      if (!all.ok) throw all.error;
      expect(all.entries.filter((e) => e.event === "metadata")).toHaveLength(32);
      expect(rows.looks).toBeGreaterThanOrEqual(30);
      expect(rows.returned).toBe(all.entries.length);
      await driver.close();
    });
  });
}
