import { describe, it, expect } from "vitest";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { acquirePlanLock } from "../src/lock/plan-lock.js";
import { readLockHolder } from "../src/lock/holder.js";
import { readWorkflowMetadata, writeWorkflowMetadata } from "../src/store/metadata.js";
import { sampleMetadata } from "./helpers/metadata-fixtures.js";
import { spawnLockChild } from "./helpers/lock-children.js";

interface Report {
  event: string;
  [key: string]: unknown;
}

describe("plan lock: a holder paused past the stale time", () => {
  it("is told it lost the lock, its write is refused by generation, and it exits cleanly", async () => {
    const runDir = mkdtempSync(path.join(tmpdir(), "phasekit-lock-sigstop-"));
    const file = path.join(runDir, "workflow.json");
    const created = await writeWorkflowMetadata(file, sampleMetadata("sigstop"), { expectedGeneration: null });
    expect(created.ok).toBe(true);

    const sleeper = spawnLockChild("lock-sigstop-holder.mjs", [runDir]);
    const ready = JSON.parse(await sleeper.next(/"event":"ready"/, true)) as Report;
    expect(ready.generation).toBe(1);
    const seen = await readLockHolder(runDir, { staleMs: 2_000 });
    expect(seen).toMatchObject({ held: true, stale: false, holder: { tool: "sleeper", pid: sleeper.proc.pid } });

    // While it runs, the lock is busy and the error names the holder.
    const busy = await acquirePlanLock({ runDir, owner: { tool: "taker" }, staleMs: 2_000 });
    expect(busy.ok).toBe(false);
    if (!busy.ok) {
      expect(busy.error.code).toBe("LOCKED");
      expect(busy.error.message).toContain(`tool sleeper (pid ${sleeper.proc.pid}`);
    }

    sleeper.proc.kill("SIGSTOP");
    try {
      // Past the stale time the lock is taken over, and the new holder writes generation 2.
      await sleep(2_600);
      const taken = await acquirePlanLock({ runDir, owner: { tool: "taker" }, staleMs: 2_000, retries: 50 });
      if (!taken.ok) throw taken.error;
      expect(taken.lock.tookOverFrom).toMatchObject({ tool: "sleeper", pid: sleeper.proc.pid });
      const current = await readWorkflowMetadata(file);
      if (!current.ok || current.metadata === null) throw new Error("workflow.json unreadable");
      const { schemaVersion: _v, generation, ...rest } = current.metadata;
      const wrote = await writeWorkflowMetadata(file, { ...rest, phase: "written-by-taker" }, { expectedGeneration: generation });
      expect(wrote.ok).toBe(true);

      sleeper.proc.kill("SIGCONT");
      // Let its refresh timer run first, as it would in a real run that woke up mid-sleep.
      await sleeper.next(/"event":"aborted"/, true);
      sleeper.send("go");
      const done = await sleeper.exited;
      expect(done, done.stderr).toMatchObject({ code: 0, signal: null });
      const reports = sleeper.lines.map((l) => JSON.parse(l) as Report);
      const by = (event: string) => reports.find((r) => r.event === event);
      expect(by("aborted")).toMatchObject({ code: "LOCK_LOST" });
      expect(by("assertHeld")).toMatchObject({ result: "LOCK_LOST" });
      expect(by("write")).toMatchObject({ result: "STALE_GENERATION" });
      expect(by("release")).toMatchObject({ result: "LOCK_NOT_OWNED" });
      expect(by("exit")).toBeDefined();

      // The taker's lock and write survived the sleeper's wake-up.
      await taken.lock.assertHeld();
      expect(await readLockHolder(runDir, { staleMs: 2_000 })).toMatchObject({ held: true, holder: { token: taken.lock.holder.token } });
      const after = await readWorkflowMetadata(file);
      expect(after.ok && after.metadata).toMatchObject({ generation: 2, phase: "written-by-taker" });
      expect(await taken.lock.release()).toEqual({ ok: true, released: true });
      expect(await readLockHolder(runDir)).toMatchObject({ held: false });
    } finally {
      sleeper.proc.kill("SIGCONT");
      sleeper.end();
    }
  }, 60_000);
});
