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

// One checkpoint store per lease, as the fs run log and PostgreSQL keep one: the engine folds a holder's history
// once and then knows only its own appends, so two folds under one lease would each miss the other's steps (a
// body run again, a compaction through one cutting the other's entries). An epoch names one lease of one run.
const leased = new WeakMap<MemoryHistory, Map<number, Promise<CheckpointStore>>>();

/**
 * The checkpoints of run `slug` for the lease of `epoch` (null: a reader, afresh at every call; a lease gets the
 * same store at every call); `mayWrite(what)` throws when this caller may not write.
 */
export function createMemoryCheckpoints(slug: string, history: MemoryHistory, epochs: { epoch: number }, epoch: number | null, mayWrite: (what: string) => void): Promise<CheckpointStore> {
  const open = async (): Promise<CheckpointStore> => checkpointsOver(await historyOverEntries(memoryEntryPort(slug, history, epochs), { run: slug, epoch, now: () => AT, mayWrite }));
  if (epoch === null) return open();
  const mine = leased.get(history) ?? new Map<number, Promise<CheckpointStore>>();
  leased.set(history, mine);
  const known = mine.get(epoch);
  if (known !== undefined) return known;
  const made = open();
  mine.set(epoch, made);
  made.catch(() => mine.delete(epoch));
  return made;
}
