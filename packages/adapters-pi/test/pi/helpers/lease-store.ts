/** Test stores for the pi extension whose locks hand out a changed store (a fault, a displacement) to their holder. */
import type { PlanStore } from "../../../src/store/plan-store.js";

/**
 * The extension's store factory: `outside` for what the session does without a lock, and `held(store)` as the
 * store of every lock it takes (`lock.store`), over the same runs as `mem`.
 */
export function storeWithLeaseStores(mem: PlanStore, outside: PlanStore, held: (leaseStore: PlanStore) => PlanStore): (cwd: string) => PlanStore {
  return () =>
    Object.create(outside, {
      lock: {
        value: async (...args: Parameters<PlanStore["lock"]>) => {
          const got = await mem.lock(...args);
          if (!got.ok) return got;
          return { ok: true, lock: Object.create(got.lock, { store: { value: held(got.lock.store ?? mem) } }) };
        },
      },
      close: { value: async () => undefined },
    }) as PlanStore;
}
