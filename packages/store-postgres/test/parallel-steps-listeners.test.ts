/**
 * Many steps in flight under one lease: each fenced write waits on the lease's abort signal (`untilLost`). With a
 * listener per write, more than 10 writes in flight passed Node's listener limit on that one signal and the run
 * printed MaxListenersExceededWarning (and the listeners grew with the steps in flight).
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runWorkflow } from "@phasekit/adapters-pi";
import { openPostgresPlanStore, type PostgresPlanStore } from "../src/index.js";
import { startCluster } from "./helpers/cluster.js";

const started = startCluster();
const PARALLEL = 50;

if (!started.ok) {
  describe.skip(`postgres parallel steps (SKIPPED: ${started.reason})`, () => it("needs PostgreSQL", () => undefined));
} else {
  const { cluster } = started;
  let store: PostgresPlanStore | undefined;
  afterAll(async () => {
    await store?.close();
    cluster.destroy();
  });

  describe("postgres: many steps in flight under one lease", () => {
    it(`${PARALLEL} parallel steps, all writing at once, emit no MaxListenersExceededWarning`, async () => {
      const warnings: Error[] = [];
      const onWarning = (w: Error): void => void warnings.push(w);
      process.on("warning", onWarning);
      try {
        store = await openPostgresPlanStore({ connectionString: cluster.url, namespace: `par-${randomUUID()}` });
        const repoRoot = mkdtempSync(path.join(tmpdir(), "phasekit-pg-par-"));
        // Every body waits until all have started, so every step's completion is in flight at the same time.
        let entered = 0;
        let allIn!: () => void;
        const gate = new Promise<void>((r) => (allIn = r));
        const r = await runWorkflow({ repoRoot, toolName: "t", target: "par", store }, async (ctx) =>
          Promise.all(
            Array.from({ length: PARALLEL }, (_, i) =>
              ctx.step(`s${i}`, { i }, async () => {
                if (++entered === PARALLEL) allIn();
                await gate;
                return { i };
              }),
            ),
          ),
        );
        expect(r).toMatchObject({ status: "completed" });
        expect(r.status === "completed" && r.result).toHaveLength(PARALLEL);
        // A warning is emitted on a later tick than the listener that caused it: let that tick pass.
        await new Promise((done) => setImmediate(done));
      } finally {
        process.off("warning", onWarning);
      }
      expect(warnings.map((w) => `${w.name}: ${w.message}`).filter((w) => w.startsWith("MaxListenersExceededWarning"))).toEqual([]);
    });
  });
}
