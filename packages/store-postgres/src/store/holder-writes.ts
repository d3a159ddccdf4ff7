/**
 * Whose write is it: the holder's writes (metadata, journal, clearing a control request, checkpoints) fenced by
 * one lease. A lease's own store (`lock.store`) always writes under that lease; the store object it was taken
 * through writes under its one unreleased lease on the run, as a writer without a lease when it holds none, and
 * not at all when it holds several (it cannot tell whose write it is).
 */
import type { CheckpointStore, PlanStore } from "@phasekit/adapters-pi";
import { slugMismatch } from "@phasekit/adapters-pi/store-kit";
import type { Db, Fence } from "../db/db.js";
import { ambiguousHolder } from "../db/errors.js";
import type { Lease } from "../lease/lease.js";
import { createPgCheckpoints } from "./checkpoints.js";
import { clearControl } from "./control.js";
import { appendRunJournal, writeRunMetadata } from "./runs.js";

/** A lease's checkpoint store of one run, and the clock it stamps with. */
interface Opened {
  checkpoints: CheckpointStore;
  clock: { now: () => Date };
}

// By lease: a released lease's entries go with it.
const opened = new WeakMap<object, Map<string, Opened>>();

/** The PlanStore methods that write as a holder. */
export type HolderWrites = Pick<PlanStore, "writeMetadata" | "appendJournal" | "clearControl" | "checkpoints">;

/** The unreleased leases one store object took, per run. */
export class LeaseBook {
  private readonly bySlug = new Map<string, Set<Lease>>();

  add(slug: string, lease: Lease): void {
    const set = this.bySlug.get(slug) ?? new Set<Lease>();
    set.add(lease);
    this.bySlug.set(slug, set);
  }

  delete(slug: string, lease: Lease): void {
    const set = this.bySlug.get(slug);
    set?.delete(lease);
    if (set?.size === 0) this.bySlug.delete(slug);
  }

  /** The fence of the store object's one lease on `slug`; null with none; LOCK_NOT_OWNED with several. */
  soleFence(slug: string): Fence {
    const set = this.bySlug.get(slug);
    if (set === undefined) return null;
    if (set.size > 1) throw ambiguousHolder(slug, set.size);
    const [only] = set;
    return only === undefined ? null : { epoch: only.epoch, token: only.token, lease: only };
  }

  /** Stops every heartbeat and forgets the leases (the process is going away; they expire on their own). */
  stopAll(): void {
    for (const set of this.bySlug.values()) for (const l of set) l.stop();
    this.bySlug.clear();
  }
}

/** Runs `fn`, turning a thrown WorkflowError into the port's `{ ok: false, error }`. */
export async function settle<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    if ((error as { name?: unknown })?.name === "WorkflowError") return { ok: false, error } as T;
    throw error;
  }
}

/** The holder's write methods, each fenced by `fenceOf(slug)` (which may throw LOCK_NOT_OWNED). */
export function holderWrites(db: Db, slugOf: (slug: string) => string, fenceOf: (slug: string) => Fence): HolderWrites {
  return {
    writeMetadata: (slug, next, expected) =>
      settle(async () => {
        const s = slugOf(slug);
        const mismatch = slugMismatch(s, next);
        if (mismatch !== undefined) return { ok: false, error: mismatch };
        return writeRunMetadata(db, s, fenceOf(s), next, expected);
      }),
    appendJournal: (slug, entry) =>
      settle(async () => {
        const s = slugOf(slug);
        return appendRunJournal(db, s, fenceOf(s), entry);
      }),
    clearControl: (slug, request) =>
      settle(async () => {
        const s = slugOf(slug);
        return clearControl(db, s, fenceOf(s), request);
      }),
    async checkpoints(slug, opts) {
      const s = slugOf(slug);
      // The checkpoint store carries the fence it was made with: a lease taken later never becomes its own.
      const fence = fenceOf(s);
      if (fence?.lease === undefined) return createPgCheckpoints(db, s, fence, opts.now);
      // One per lease and run (its step index loads once, not at every call: the pi extension asks at every turn
      // end), shared by every caller under that lease, so each sees the others' writes; the latest clock stamps.
      const mine = opened.get(fence.lease) ?? new Map<string, Opened>();
      opened.set(fence.lease, mine);
      const known = mine.get(s);
      if (known !== undefined) {
        known.clock.now = opts.now;
        return known.checkpoints;
      }
      const clock = { now: opts.now };
      const checkpoints = createPgCheckpoints(db, s, fence, () => clock.now());
      mine.set(s, { checkpoints, clock });
      return checkpoints;
    },
  };
}
