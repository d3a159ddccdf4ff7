/**
 * A rerun mark as `phasekit rerun` wrote one before it refused phasekit's own history entries (a pi run's history
 * holds nothing else): such marks are still on disk, and their runs still have to end and be resumed.
 */
import { RERUN_EVENT } from "../../src/engine/reuse-decision.js";
import { openRunLog } from "../../src/store/run-log/run-log.js";

/** Marks `keys` (from `keys[0]`) in the run log at `runDir`, under a lease of its own: it supersedes every earlier record. */
export async function writeLegacyMark(runDir: string, keys: readonly string[]): Promise<void> {
  const log = await openRunLog({ runDir });
  try {
    await log.event(RERUN_EVENT, { from: keys[0] ?? "", keys: [...keys], at: new Date().toISOString() });
  } finally {
    await log.close();
  }
}
