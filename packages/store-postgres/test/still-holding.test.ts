/**
 * `stillHolding`, the check right before a step's body: a lease confirmed fresh lets the work start; a lost one
 * stops it with the loss; renewals that land but never make the lease fresh (each slower than the lease) stop it
 * after a bounded number of tries, with a typed error (it looped forever before).
 */
import { describe, expect, it } from "vitest";
import { stillHolding, type LeaseGuard } from "../src/db/db.js";

function guard(over: Partial<LeaseGuard> & { confirms?: number[] }): LeaseGuard & { confirms: number[] } {
  const confirms = over.confirms ?? [];
  const controller = new AbortController();
  return {
    signal: over.signal ?? controller.signal,
    fresh: over.fresh ?? (() => true),
    confirm: over.confirm ?? (async () => (confirms.push(1), true)),
    confirms,
  };
}

describe("stillHolding", () => {
  it("returns at once for a fresh lease, without a renewal", async () => {
    const g = guard({});
    await stillHolding(g, async () => new Error("refused"));
    expect(g.confirms).toEqual([]);
  });

  it("renews a lease that is not fresh, and goes on once a renewal makes it fresh", async () => {
    let fresh = false;
    const confirms: number[] = [];
    const g = guard({ fresh: () => fresh, confirm: async () => (confirms.push(1), (fresh = true)), confirms });
    await stillHolding(g, async () => new Error("refused"));
    expect(confirms).toHaveLength(1);
  });

  it("a lost lease stops the work with the loss", async () => {
    const controller = new AbortController();
    controller.abort(Object.assign(new Error("lost"), { code: "LOCK_LOST" }));
    const g = guard({ fresh: () => false, confirm: async () => false, signal: controller.signal });
    await expect(stillHolding(g, async () => new Error("refused"))).rejects.toMatchObject({ code: "LOCK_LOST" });
  });

  it("renewals that land but never make the lease fresh stop the work after three, with WRITE_FAILED", async () => {
    const confirms: number[] = [];
    const g = guard({ fresh: () => false, confirms });
    await expect(stillHolding(g, async () => new Error("refused"))).rejects.toMatchObject({ code: "WRITE_FAILED", details: { field: "lease" } });
    expect(confirms).toHaveLength(3);
  });
});
