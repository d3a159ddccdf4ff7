/**
 * A run log closed while a step's own compaction is under way (the store closed, or the lock released, while a
 * step completes): the close-time fold waits for that compaction instead of running beside it. Beside it, the
 * fold deleted the snapshot the other was about to name in its `base` line, and the run's history could not be
 * read again (CORRUPT_FILE: "the snapshot a head relies on cannot be read"). The close is made at an exact fs
 * boundary of the compaction (its snapshot's open), not at a moment in time.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { openRunLog, type RunLog } from "../src/store/run-log/run-log.js";

describe("closing a run log during a compaction", () => {
  it("waits for the compaction under way, folds after it, and leaves a history that opens with every acknowledged step", async () => {
    const runDir = mkdtempSync(path.join(tmpdir(), "pk-close-compaction-"));
    // Four earlier holders: the next close folds (FOLD_AT_SEGMENTS).
    for (let i = 0; i < 4; i++) {
      const l = await openRunLog({ runDir, autoCompactAfter: 0 });
      await l.step(`k${i}`, {}, () => i);
      await l.close();
    }
    let armed = false;
    let closing: Promise<void> | undefined;
    let log: RunLog | undefined;
    log = await openRunLog({
      runDir,
      autoCompactAfter: 1,
      beforeFsCall: (name) => {
        if (armed && name === "open(snapshot)") {
          armed = false;
          closing = log?.close();
        }
      },
    });
    armed = true;
    const acknowledged: number[] = [];
    for (let j = 0; j < 4; j++) {
      await log.step("s", { j }, () => j).then(
        () => void acknowledged.push(j),
        () => undefined,
      );
    }
    expect(closing).toBeDefined();
    await closing;
    const again = await openRunLog({ runDir });
    for (let i = 0; i < 4; i++) expect(again.entry(`k${i}`)?.status).toBe("completed");
    // The step was acknowledged before the close (its compaction came after its record), so the history keeps it.
    expect(acknowledged.length).toBeGreaterThan(0);
    expect(again.entry("s")?.status).toBe("completed");
    await again.close();
  });
});
