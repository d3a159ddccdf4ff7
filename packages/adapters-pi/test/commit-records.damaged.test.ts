/**
 * A commit record in a run's history that is not one is damage: the holder's and a reader's `commits()` say so
 * with CORRUPT_FILE naming the history's file and the record's place in it, as every reader of the run log
 * reports a record it cannot read. Skipping it would make an interrupted `git commit` look never intended.
 */
import { readFileSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { createFsPlanStore } from "../src/index.js";
import { openRunLog } from "../src/store/run-log/run-log.js";
import { COMMIT_EVENT } from "../src/store/log-checkpoints.js";

const at = "2026-01-02T03:04:05.000Z";
const good = { v: 1, kind: "commit", id: "c1", status: "intended", message: "m", files: ["a.ts"], intendedAt: at };

describe("a damaged commit record on the fs store", () => {
  it("is CORRUPT_FILE naming the segment, the byte and the field, for the holder and for a reader", async () => {
    const root = await mkdtemp(path.join(tmpdir(), "phasekit-commit-damaged-"));
    const store = createFsPlanStore({ repoRoot: root });
    const runDir = path.join(root, "ai_plan", "run");
    const first = await store.lock("run", { owner: { tool: "t" } });
    if (!first.ok) throw first.error;
    await (await (first.lock.store ?? store).checkpoints("run", { now: () => new Date() })).recordCommitIntent({ id: "c0", message: "m", files: ["a.ts"] });
    await first.lock.release();
    // Bytes no writer of phasekit makes: a commit event whose status is not one (an edit, a bit flip, a newer version).
    const log = await openRunLog({ runDir });
    await log.event(COMMIT_EVENT, good);
    await log.event(COMMIT_EVENT, { ...good, id: "c2", status: "pushed" });
    await log.close();
    const damaged = { code: "CORRUPT_FILE", message: expect.stringMatching(/runlog.*commit record "c2".*at byte \d+.*status/), details: { file: expect.stringMatching(/runlog[/\\]\d+\.seg$/), field: "status", offset: expect.any(Number) } };
    try {
      const reader = await store.checkpoints("run", { now: () => new Date() });
      const error = (await reader.commits().catch((e: unknown) => e)) as { details: { file: string; offset: number } };
      expect(error).toMatchObject(damaged);
      // The byte it names is where the damaged record's data starts.
      expect(readFileSync(error.details.file).subarray(error.details.offset).toString("utf8")).toMatch(/^\{[^\n]*"id":"c2"[^\n]*"status":"pushed"/);
      const held = await store.lock("run", { owner: { tool: "t" } });
      if (!held.ok) throw held.error;
      try {
        const cps = await (held.lock.store ?? store).checkpoints("run", { now: () => new Date() });
        await expect(cps.commits()).rejects.toMatchObject(damaged);
        await expect(cps.markCommitted("c1")).rejects.toMatchObject(damaged);
      } finally {
        await held.lock.release();
      }
    } finally {
      await store.close();
    }
  });
});
