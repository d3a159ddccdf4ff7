/**
 * Pause and stop requests belong to the run's history on PostgreSQL too (the scenarios of adapters-pi's
 * run-workflow.control-history.test.ts): a request is stamped with the run's generation in the statement that
 * files it, so one filed during a run's last step ends with that run and never pauses or stops a run re-entered
 * later, while one filed for the re-entered run, or a stop filed for a paused run, still takes effect.
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { requestPause, requestStop, runWorkflow, type PlanStore, type RunContext } from "@phasekit/adapters-pi";
import { newControlRequest } from "@phasekit/adapters-pi/store-kit";
import type { PostgresPlanStore } from "../src/index.js";
import { startCluster } from "./helpers/cluster.js";
import { storeSetup } from "./helpers/stores.js";

const started = startCluster();

if (!started.ok) {
  describe.skip(`postgres control requests in the run's history (SKIPPED: ${started.reason})`, () => it("needs PostgreSQL", () => undefined));
} else {
  const { cluster } = started;
  const { open, admin } = storeSetup(cluster);

  type Body = (ctx: RunContext) => Promise<string>;
  /**
   * `store` as a runner that dies right after its run's final write sees it: the holder's clearControl never
   * happens, so what the run leaves pending stays pending (as after a SIGKILL between the two statements).
   */
  const diesBeforeClearing = (store: PostgresPlanStore): PlanStore => ({
    ...store,
    lock: async (slug, options) => {
      const got = await store.lock(slug, options);
      if (!got.ok) return got;
      const holder: PlanStore = { ...got.lock.store, clearControl: async () => ({ ok: true, cleared: false }) };
      return { ok: true, lock: new Proxy(got.lock, { get: (t, k) => (k === "store" ? holder : Reflect.get(t, k)) }) };
    },
  });
  const setup = async () => {
    const namespace = `ch-${randomUUID()}`;
    const store = await open(namespace);
    const repoRoot = mkdtempSync(path.join(tmpdir(), "phasekit-pg-ch-"));
    const run = (body: Body, reenter = false, through: PlanStore = store) => runWorkflow({ repoRoot, target: "job", toolName: "history-test", store: through, reenter }, body);
    const pending = async () => (await admin.query<{ kind: string; request: { generation?: number } }>("SELECT kind, request FROM phasekit_control WHERE namespace = $1 AND slug = 'job'", [namespace])).rows;
    /** A request row written as a filer that checked the run earlier and wrote late would leave it. */
    const plant = (signal: "pause" | "stop", generation: number) =>
      admin.query("INSERT INTO phasekit_control (namespace, slug, kind, request) VALUES ($1, 'job', $2, $3) ON CONFLICT (namespace, slug, kind) DO UPDATE SET request = EXCLUDED.request", [
        namespace,
        signal,
        newControlRequest(signal, "stalled", undefined, generation),
      ]);
    return { store, run, pending, plant };
  };

  describe("postgres: control requests belong to the run's history", () => {
    it("a request is stamped with the generation the run had when it was filed", async () => {
      const { store, run } = await setup();
      const seen: Array<number | undefined> = [];
      const first = await run(async (ctx) =>
        ctx.step("a", 1, async () => {
          const meta = await store.readMetadata("job");
          seen.push(meta.ok ? meta.metadata?.generation : undefined, (await requestStop({ store, target: "job", reason: "stamped" })).generation);
          return "a";
        }),
      );
      expect(first.status).toBe("completed"); // the stop arrived during the last step
      expect(seen[0]).toEqual(expect.any(Number));
      expect(seen[1]).toBe(seen[0]);
    });

    for (const signal of ["pause", "stop"] as const) {
      it(`a ${signal} filed during the last step ends with that run, even left behind by a runner that died before clearing it`, async () => {
        const { store, run, pending } = await setup();
        const first = await run(async (ctx) => {
          await ctx.step("a", 1, async () => "a");
          return ctx.step("last", 2, async () => {
            await (signal === "pause" ? requestPause : requestStop)({ store, target: "job", reason: "filed during the last step" });
            return "last";
          });
        }, false, diesBeforeClearing(store));
        expect(first.status).toBe("completed");
        const left = await pending();
        expect.soft(left).toMatchObject([{ kind: signal, request: { generation: expect.any(Number) } }]);
        expect.soft(left[0]?.request.generation).toBeLessThan(first.metadata?.generation ?? -1);
        const again = await run(async (ctx) => {
          await ctx.step("a", 1, async () => "a");
          return ctx.step("more", 3, async () => "more");
        }, true);
        expect(again).toMatchObject({ status: "completed", result: "more" });
        expect(await pending()).toEqual([]);
      });
    }

    it("a late request stamped before the run ended (its filer checked, then wrote after the run ended) is cleared, never honoured", async () => {
      const { run, pending, plant } = await setup();
      const first = await run(async (ctx) => ctx.step("a", 1, async () => "a"));
      expect(first.status).toBe("completed");
      const ended = first.metadata?.generation ?? -1;
      const again = await run(async (ctx) => {
        await ctx.step("a", 1, async () => "a");
        await plant("pause", ended - 1);
        return ctx.step("more", 3, async () => "more");
      }, true);
      expect(again).toMatchObject({ status: "completed", result: "more" });
      expect(await pending()).toEqual([]);
    });

    it("a request left behind by a run that ended is cleared when the run is re-entered", async () => {
      const { run, pending, plant } = await setup();
      const first = await run(async (ctx) => ctx.step("a", 1, async () => "a"));
      await plant("stop", (first.metadata?.generation ?? -1) - 1);
      const again = await run(async (ctx) => {
        expect(await pending()).toEqual([]);
        return ctx.step("more", 3, async () => "more");
      }, true);
      expect(again).toMatchObject({ status: "completed", result: "more" });
    });

    it("a request filed for the re-entered run itself takes effect", async () => {
      const { store, run } = await setup();
      expect((await run(async (ctx) => ctx.step("a", 1, async () => "a"))).status).toBe("completed");
      const again = await run(async (ctx) => {
        await ctx.step("b", 2, async () => {
          await requestStop({ store, target: "job", reason: "stop the re-entered run" });
          return "b";
        });
        return ctx.step("c", 3, async () => "c");
      }, true);
      expect(again).toMatchObject({ status: "cancelled", reason: "stop the re-entered run" });
    });

    it("a stop filed for a paused run still ends its next resume cancelled", async () => {
      const { store, run } = await setup();
      const paused = await run(async (ctx) => {
        await ctx.step("a", 1, async () => {
          await requestPause({ store, target: "job", reason: "break" });
          return "a";
        });
        return ctx.step("b", 2, async () => "b");
      });
      expect(paused.status).toBe("paused");
      await requestStop({ store, target: "job", reason: "give up" });
      const resumed = await run(async (ctx) => ctx.step("b", 2, async () => "b"));
      expect(resumed).toMatchObject({ status: "cancelled", reason: "give up" });
    });
  });
}
