/**
 * Two holders of one run through ONE fs store object: fencing belongs to the lease, not to the store. A holder
 * whose lock was lost (its lock folder removed) and retaken by a second lock of the same store writes through
 * its own lease (`lock.store`, as runWorkflow does), so its late writes are refused with LOCK_LOST instead of
 * going through the new holder's run log.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { lockDirOf } from "../src/lock/holder.js";
import { createFsPlanStore } from "../src/store/plan-store.js";
import { sampleMetadata } from "./helpers/metadata-fixtures.js";

const owner = { owner: { tool: "two-holders" } };

describe("fs store: two holders through one store object", () => {
  it("a displaced lease's metadata write and step are refused; the new holder's history has none of them", async () => {
    const store = createFsPlanStore({ repoRoot: mkdtempSync(path.join(tmpdir(), "pk-two-")) });
    try {
      const a = await store.lock("r", owner);
      if (!a.ok) throw a.error;
      const viaA = a.lock.store ?? store;
      const first = await viaA.writeMetadata("r", sampleMetadata("r"), null);
      expect(first.ok).toBe(true);
      const cpsA = await viaA.checkpoints("r", { now: () => new Date() });
      // A's lock is lost (its folder removed), and the same store object takes the run again.
      rmSync(lockDirOf(path.join(store.planRoot, "r")), { recursive: true, force: true });
      const b = await store.lock("r", owner);
      if (!b.ok) throw b.error;
      const viaB = b.lock.store ?? store;
      // A writes before its heartbeat noticed: both writes are fenced by A's own epoch.
      const late = await viaA.writeMetadata("r", { ...sampleMetadata("r", 1), status: "completed" }, 1);
      expect(late).toMatchObject({ ok: false, error: { code: "LOCK_LOST" } });
      let ran = false;
      await expect(cpsA.step("late-step", {}, () => ((ran = true), "late"))).rejects.toMatchObject({ code: "LOCK_LOST" });
      expect(ran).toBe(false);
      // B sees neither, and writes on from the generation it read.
      const seen = await viaB.readMetadata("r");
      expect(seen).toMatchObject({ ok: true, metadata: { generation: 1, status: "running" } });
      expect(await viaB.writeMetadata("r", sampleMetadata("r", 2), 1)).toMatchObject({ ok: true, metadata: { generation: 2 } });
      const cpsB = await viaB.checkpoints("r", { now: () => new Date() });
      expect((await cpsB.records()).map((r) => r.stepId)).toEqual([]);
      await b.lock.release();
      await a.lock.release().catch(() => undefined);
    } finally {
      await store.close();
    }
  });
});
