/**
 * A run log closed while a step's own compaction is under way (the store closed, or the lock released, while a
 * step completes): the close-time fold waits for that compaction instead of running beside it. Beside it, the
 * fold deleted the snapshot the other was about to name in its `base` line, and the run's history could not be
 * read again (CORRUPT_FILE: "the snapshot a head relies on cannot be read"). The close is made at every fs
 * boundary of the steps and their compaction in turn, not at a moment in time.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { openRunLog, type RunLog } from "../src/store/run-log/run-log.js";

/** A history of four earlier holders (the next close folds: FOLD_AT_SEGMENTS), in a fresh run folder. */
async function seeded(): Promise<string> {
  const runDir = mkdtempSync(path.join(tmpdir(), "pk-close-compaction-"));
  for (let i = 0; i < 4; i++) {
    const l = await openRunLog({ runDir, autoCompactAfter: 0 });
    await l.step(`k${i}`, {}, () => i);
    await l.close();
  }
  return runDir;
}

/** Steps that compact after each record; the log is closed at fs boundary `closeAt` (0: never). How many boundaries there were. */
async function stepsClosedAt(runDir: string, closeAt: number): Promise<{ boundaries: number; acknowledged: string[]; closing: Promise<void> | undefined }> {
  let n = 0;
  let closing: Promise<void> | undefined;
  let log: RunLog | undefined;
  log = await openRunLog({
    runDir,
    autoCompactAfter: 1,
    beforeFsCall: () => {
      if (++n === closeAt) closing = log?.close();
    },
  });
  n = 0; // counted from the first step on
  const acknowledged: string[] = [];
  for (let j = 0; j < 3; j++) {
    await log.step(`s${j}`, { j }, () => j).then(
      () => void acknowledged.push(`s${j}`),
      () => undefined,
    );
  }
  return { boundaries: n, acknowledged, closing };
}

describe("closing a run log during a compaction", () => {
  it("at every fs boundary of the steps and their compaction: the close waits, and the history opens with every acknowledged step", async () => {
    const probe = await seeded();
    const { boundaries } = await stepsClosedAt(probe, 0);
    expect(boundaries).toBeGreaterThan(10);
    for (let k = 1; k <= boundaries; k++) {
      const runDir = await seeded();
      const { acknowledged, closing } = await stepsClosedAt(runDir, k);
      expect(closing, `boundary ${k}`).toBeDefined();
      await closing;
      const again = await openRunLog({ runDir });
      for (let i = 0; i < 4; i++) expect(again.entry(`k${i}`)?.status, `boundary ${k}`).toBe("completed");
      // Every step acknowledged before or during the close is in the history.
      for (const key of acknowledged) expect(again.entry(key)?.status, `boundary ${k}: ${key}`).toBe("completed");
      await again.close();
    }
  });
});
