/**
 * The memory store's history: a backend of the entry port (engine/entry-port.ts) and nothing more, so the
 * engine's rules run over it as they would over any new backend: this file is what writing one takes.
 */
import { workflowError } from "@phasekit/core";
import type { EntryPort, StoredEntry } from "../engine/entry-port.js";

/** One run's entries and blobs, shared by every store object over the same runs. */
export interface MemoryHistory {
  entries: StoredEntry[];
  blobs: Map<string, string>;
  next: number;
}

/** An empty history. */
export function newMemoryHistory(): MemoryHistory {
  return { entries: [], blobs: new Map(), next: 0 };
}

/** The entry port's claim, at once: the run's next epoch (every earlier epoch's append is refused from now on). */
export function claimEpoch(epochs: { epoch: number }): number {
  return ++epochs.epoch;
}

/** The entry port of run `slug` over `history`; `epochs.epoch` is the run's latest claimed epoch. */
export function memoryEntryPort(slug: string, history: MemoryHistory, epochs: { epoch: number }): EntryPort {
  const file = `memory:${slug}/history`;
  const fence = (epoch: number, what: string): void => {
    if (epoch !== epochs.epoch) {
      throw workflowError("store", "LOCK_LOST", `run ${slug}: the lease of epoch ${epoch} is lost (${what}); epoch ${epochs.epoch} holds the run.`, { file, value: epoch, hint: "another holder has the run now" });
    }
  };
  return {
    file,
    claim: async () => claimEpoch(epochs),
    async append(epoch, entries) {
      fence(epoch, "an append");
      for (const entry of entries) history.entries.push({ pos: history.next++, epoch, entry: structuredClone(entry) });
    },
    async read(from) {
      return history.entries.filter((s) => s.pos >= from).map((s) => structuredClone(s));
    },
    async putBlob(address, text) {
      history.blobs.set(address, text);
    },
    async getBlob(address) {
      return history.blobs.get(address);
    },
    async compact(epoch, keep, blobs) {
      fence(epoch, "a compaction");
      history.entries = keep.map((s) => structuredClone(s));
      let removedBlobs = 0;
      for (const address of [...history.blobs.keys()]) {
        if (!blobs.has(address)) {
          history.blobs.delete(address);
          removedBlobs++;
        }
      }
      return { removedBlobs };
    },
  };
}
