/**
 * DurableRuns one operation at a time, in call order (durable-runs.ts): session_start leaves the claim running in
 * the background, and whatever comes next (a write, a release at shutdown, a resume) waits for it instead of
 * racing it.
 */
import { setImmediate as nextTick } from "node:timers";
import type { DurableRuns } from "./durable-contract.js";

// node:timers' own setImmediate, not the global one: a host (or a test) that fakes the global timers must not
// stall the run's claim, which every move awaits.
function nextTurn(): Promise<void> {
  return new Promise((resolve) => nextTick(resolve));
}

/** `inner` with every operation that touches the store queued behind the ones called before it. */
export function serialized(inner: DurableRuns): DurableRuns {
  let queue: Promise<unknown> = Promise.resolve();
  const serial = <T>(fn: () => Promise<T>): Promise<T> => {
    const p = queue.then(fn, fn);
    queue = p.catch(() => undefined);
    return p;
  };
  return {
    enabled: inner.enabled,
    heldSlug: () => inner.heldSlug(),
    // A claim starts on the next turn of the event loop: its first part (store, folder checks) is synchronous,
    // and session_start, which does not wait for it, returns to pi first.
    claim: (cwd, state, now) => serial(() => nextTurn().then(() => inner.claim(cwd, state, now))),
    write: (state, now) => serial(() => inner.write(state, now)),
    resume: (cwd, id) => serial(() => inner.resume(cwd, id)),
    pendingControl: (signal) => serial(() => inner.pendingControl(signal)),
    clearControl: (request) => serial(() => inner.clearControl(request)),
    takeControl: (request) => serial(() => inner.takeControl(request)),
    requestControl: (signal, input, watched) => serial(() => inner.requestControl(signal, input, watched)),
    budget: (taskId) => inner.budget(taskId),
    recordBudget: (taskId, used, now, counts) => serial(() => inner.recordBudget(taskId, used, now, counts)),
    savePin: (state, data, now) => serial(() => inner.savePin(state, data, now)),
    loadPin: (state, now) => serial(() => inner.loadPin(state, now)),
    release: () => serial(() => inner.release()),
  };
}
