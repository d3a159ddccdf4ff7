/**
 * The checkpoints of a run opened to read: what `PlanStore.checkpoints()` gives a caller that does not hold the
 * run's lock (the CLI, an inspector, a test looking at a live run). It claims nothing: claiming takes a new epoch,
 * which fences the live holder off and ends its run with LOCK_LOST. Every call reads the history afresh (the
 * reader retries past a concurrent compaction); every write is LOCK_NOT_OWNED, before any work runs. Its records
 * are the whole history, phasekit's own entries included, as the holder's and every other store's reader's are (a
 * fork copies them); the views for people leave those out (readRunSteps, storeStepRecords).
 */
import path from "node:path";
import { workflowError, type WorkflowError } from "@phasekit/core";
import { nodeFs } from "../io/fs-port.js";
import { type CommitRecord } from "../engine/records.js";
import { CHECKPOINT_LOG_FILE, readLog } from "./checkpoint-log.js";
import type { CheckpointStore } from "../engine/checkpoint-port.js";
import { commitsFrom } from "../engine/commit-record.js";
import { COMMIT_EVENT } from "./log-checkpoints.js";
import { RUN_LOG_DIR } from "./run-log/format.js";
import { readRunLog } from "./run-log/reader.js";
import { readRunHistory } from "./run-steps.js";

/** A read-only `CheckpointStore` over the history of the run in `runDir`; `slug` names it in errors. */
export function readOnlyCheckpoints(runDir: string, slug: string): CheckpointStore {
  const file = path.join(runDir, RUN_LOG_DIR);
  const refuse = (what: string): Promise<never> => Promise.reject(notHeld(slug, file, what));
  return {
    file,
    step: (id) => refuse(`ctx.step("${id}")`),
    async record(id) {
      return (await readRunHistory(runDir)).find((r) => r.stepId === id);
    },
    records: () => readRunHistory(runDir),
    recordCommitIntent: (intent) => refuse(`recording the commit intent "${intent.id}"`),
    markCommitted: (id) => refuse(`marking the commit "${id}" as made`),
    async commits(): Promise<CommitRecord[]> {
      const view = await readRunLog(runDir);
      if (view === null) {
        // A run of the earlier format, not opened by this version yet.
        const r = await readLog(nodeFs, path.join(runDir, CHECKPOINT_LOG_FILE));
        if (!r.ok) throw r.error;
        return [...r.log.commits.values()];
      }
      try {
        return [...commitsFrom(view.placedEvents(COMMIT_EVENT)).values()];
      } finally {
        view.close();
      }
    },
    compact: () => refuse("a compaction"),
  };
}

/** LOCK_NOT_OWNED for `what` (a write) through checkpoints opened to read run `slug`, whose history is `file`. */
export function notHeld(slug: string, file: string, what: string): WorkflowError {
  return workflowError("checkpoints", "LOCK_NOT_OWNED", `run ${slug}: ${what} writes to the run's history, but these checkpoints were opened to read (this store holds no lock on the run).`, {
    file,
    hint: `take the run's lock first (store.lock("${slug}", …)), then call store.checkpoints("${slug}", …); reading needs no lock`,
  });
}
