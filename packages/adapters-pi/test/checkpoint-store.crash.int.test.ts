import { describe, it, expect } from "vitest";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { createCheckpointStore } from "../src/store/checkpoints.js";
import { spawnLockChild } from "./helpers/lock-children.js";

const KILLS = process.env.CI === "true" ? 40 : 8;

describe("checkpoint store: SIGKILL mid-append", () => {
  it(`after ${KILLS} kills at random moments the log loads and every acknowledged step is reused`, async () => {
    for (let k = 0; k < KILLS; k++) {
      const runDir = mkdtempSync(path.join(tmpdir(), "phasekit-ckpt-crash-"));
      const child = spawnLockChild("checkpoint-writer.mjs", [runDir, String(k % 2 === 0 ? 8 : 0)]);
      await child.next(/^ready$/, true);
      await sleep(20 + Math.random() * 150);
      child.proc.kill("SIGKILL");
      await child.exited;
      const acked = child.lines.filter((l) => l.startsWith("ok ")).map((l) => Number(l.slice(3)));
      const store = createCheckpointStore({ runDir, now: () => new Date() });
      const records = await store.records();
      // The last acknowledged step must be reusable: its record and artifact survived the kill.
      const last = acked.at(-1);
      if (last !== undefined) {
        const id = last % 5 === 4 ? `s${last - 4}` : `s${last}`;
        const again = await store.step(id, { i: last }, () => {
          throw new Error(`step ${id} (ack ${last}) ran again after the crash`);
        });
        expect(again).toMatchObject({ reused: true, output: { i: last } });
      }
      // Every acknowledged step id has a record (a later rerun of the same id may have left it `started`).
      const ids = new Set(records.map((r) => r.stepId));
      for (const i of acked) expect(ids.has(i % 5 === 4 ? `s${i - 4}` : `s${i}`), `ack ${i}`).toBe(true);
      // And the store keeps working after the crash.
      expect(await store.step("after", 1, () => "fine")).toMatchObject({ reused: false, output: "fine" });
    }
  }, 180_000);
});
