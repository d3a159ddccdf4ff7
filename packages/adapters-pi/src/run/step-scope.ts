/**
 * Which `ctx.step` function the current code runs inside, if any. A dispatch made inside a step's function would
 * not happen again when that step is reused on resume, so every later dispatch would replay the wrong recorded
 * outcome; the workflow handle refuses it instead (dispatch after the step returns).
 */
import { AsyncLocalStorage } from "node:async_hooks";

const scope = new AsyncLocalStorage<string>();

/** Runs `fn` as the body of step `key`. */
export function inStep<R>(key: string, fn: () => R): R {
  return scope.run(key, fn);
}

/** The key of the step whose function is running here, or undefined in the body itself. */
export function currentStep(): string | undefined {
  return scope.getStore();
}
