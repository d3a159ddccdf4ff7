/**
 * A store closed (or a lease released) while a write's renewal is in flight: the renewal answers "not held" with
 * the signal not aborted, since nobody took the run. The write and the check before a body then say the lease was
 * given up, not that a newer holder displaced it. No database needed: the lease is a stand-in.
 */
import { describe, expect, it } from "vitest";
import { workflowError, type WorkflowError } from "@phasekit/core";
import { fencedWrite, stillHolding, type LeaseGuard } from "../src/db/db.js";

/** A lease whose renewal closes its store meanwhile: stopped, not aborted, `givenUp` set. */
function closingLease(): LeaseGuard & { givenUp?: WorkflowError } {
  const lease: LeaseGuard & { givenUp?: WorkflowError } = {
    signal: new AbortController().signal,
    fresh: () => false,
    confirm: async () => {
      lease.givenUp = workflowError("store-postgres", "LOCK_LOST", "the lease was given up when its store was closed.", { ended: "closed" });
      return false;
    },
  };
  return lease;
}

describe("a lease given up while a renewal is in flight", () => {
  it("a refused write says the lease was given up", async () => {
    const lease = closingLease();
    await expect(fencedWrite({ epoch: 1, token: "t", lease }, async () => undefined)).rejects.toMatchObject({ code: "LOCK_LOST", details: { ended: "closed" } });
  });

  it("the check before a body says the lease was given up, not why another holder has it", async () => {
    const lease = closingLease();
    let asked = 0;
    await expect(stillHolding(lease, async () => (asked++, new Error("displaced by a newer holder")))).rejects.toMatchObject({ code: "LOCK_LOST", details: { ended: "closed" } });
    expect(asked).toBe(0);
  });
});
