/**
 * The memory PlanStore's checkpoints: the engine's (engine/checkpoints.ts over engine/entry-history.ts) on the
 * memory entry port (memory-history.ts). No durability, and no rule of its own. Every write first asks the store
 * whether it may (`mayWrite`): a reader may not (LOCK_NOT_OWNED) and a displaced lease may not (LOCK_LOST),
 * before any work runs; the port's epoch fence refuses it again at the append.
 */
import type { CheckpointStore } from "../engine/checkpoint-port.js";
import { checkpointsOver } from "../engine/checkpoints.js";
import { historyOverEntries } from "../engine/entry-history.js";
import { memoryEntryPort, type MemoryHistory } from "./memory-history.js";

const AT = new Date("2026-01-01T00:00:00.000Z");

/** The checkpoints of run `slug` for the lease of `epoch` (null: a reader); `mayWrite(what)` throws when this caller may not write. */
export async function createMemoryCheckpoints(slug: string, history: MemoryHistory, epochs: { epoch: number }, epoch: number | null, mayWrite: (what: string) => void): Promise<CheckpointStore> {
  const port = memoryEntryPort(slug, history, epochs);
  return checkpointsOver(await historyOverEntries(port, { run: slug, epoch, now: () => AT, mayWrite }));
}
