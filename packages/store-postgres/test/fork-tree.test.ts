/**
 * Issue 22: the inspector's tree of forks on a PostgreSQL store (it was empty with --store): `listForks` names the
 * runs whose `forked` event names the source, in one statement, and the inspector's timeline uses it.
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { forkRun, runWorkflow } from "@phasekit/adapters-pi";
import { forksOf } from "../../adapters-pi/src/cli/fork-tree.js";
import { closeStores } from "../../adapters-pi/src/cli/store-runs.js";
import { openPostgresPlanStore, type PostgresPlanStore } from "../src/index.js";
import { startCluster } from "./helpers/cluster.js";

const started = startCluster();

if (!started.ok) {
  describe.skip(`forks tree on PostgreSQL (SKIPPED: ${started.reason})`, () => it("needs PostgreSQL", () => undefined));
} else {
  const { cluster } = started;
  const namespace = `ft-${randomUUID().slice(0, 8)}`;
  const other = `ft-${randomUUID().slice(0, 8)}`;
  const repoRoot = mkdtempSync(path.join(tmpdir(), "phasekit-pg-ft-"));
  let store: PostgresPlanStore;
  let elsewhere: PostgresPlanStore;

  const forks = (s: PostgresPlanStore, slug: string) => {
    if (s.listForks === undefined) throw new Error("the PostgreSQL store has no listForks");
    return s.listForks(slug);
  };
  const run = (s: PostgresPlanStore, target: string) =>
    runWorkflow({ repoRoot, target, toolName: "ft", store: s, reenter: true }, async (ctx) => {
      for (const id of ["a", "b", "c"]) await ctx.step(id, { id }, () => id);
      return "done";
    });

  beforeAll(async () => {
    store = await openPostgresPlanStore({ connectionString: cluster.url, namespace });
    elsewhere = await openPostgresPlanStore({ connectionString: cluster.url, namespace: other });
    expect((await run(store, "src")).status).toBe("completed");
    expect((await run(store, "plain")).status).toBe("completed");
    expect((await run(elsewhere, "src")).status).toBe("completed");
  }, 60_000);

  afterAll(async () => {
    await closeStores();
    await store?.close();
    await elsewhere?.close();
    cluster.destroy();
  });

  describe("forks tree on PostgreSQL", () => {
    it("lists the runs forked from a run with their fork points; not forks of forks, not another namespace's", async () => {
      expect(await forks(store, "src")).toEqual([]);
      await forkRun({ store, target: "src", at: "c", id: "f-two" });
      await forkRun({ store, target: "src", at: "b", id: "f-one" });
      await forkRun({ store, target: "f-two", at: "b", id: "f-deep" });
      await forkRun({ store: elsewhere, target: "src", at: "b", id: "f-other" });
      // A fork that has run since (its journal grows past the fork's entries) is still listed.
      expect((await run(store, "f-two")).status).toBe("completed");
      expect(await forks(store, "src")).toEqual([
        { slug: "f-one", at: "b" },
        { slug: "f-two", at: "c" },
      ]);
      expect(await forks(store, "f-two")).toEqual([{ slug: "f-deep", at: "b" }]);
      expect(await forks(store, "plain")).toEqual([]);
      expect(await forks(elsewhere, "src")).toEqual([{ slug: "f-other", at: "b" }]);
    });

    it("the inspector's tree of forks reads them through --store (it was null: not offered)", async () => {
      const roots = { repoRoot, store: { kind: "postgres" as const, connectionString: cluster.url, namespace, label: `postgres:${namespace}` } };
      expect(await forksOf(roots, "src")).toEqual([
        { id: "f-one", at: "b" },
        { id: "f-two", at: "c" },
      ]);
      expect(await forksOf(roots, "f-two")).toEqual([{ id: "f-deep", at: "b" }]);
      expect(await forksOf(roots, "plain")).toEqual([]);
    });
  });
}
