/**
 * History keys phasekit writes for itself beside the body's steps (the workflow's starting state and its
 * dispatches, see run/dispatch-record.ts). Step ids cannot start with the prefix, and views of a run's steps
 * (the CLI, the inspector, `lastStep`) leave these entries out.
 */
import { workflowError, type WorkflowError } from "@phasekit/core";

/** Step keys in this namespace belong to phasekit; `ctx.step` refuses ids that start with it. */
export const RESERVED_STEP_PREFIX = "phasekit:";

/** True for a history key phasekit wrote for itself (not a step of the body). */
export function isReservedStepKey(key: string): boolean {
  return key.startsWith(RESERVED_STEP_PREFIX);
}

/** The history key of the nth dispatch (1-based) of a body; here, not in run/, because a rerun mark names them. */
export function dispatchKey(n: number): string {
  return `${RESERVED_STEP_PREFIX}dispatch#${n}`;
}

const DISPATCH_KEY = new RegExp(`^${RESERVED_STEP_PREFIX}dispatch#[1-9]\\d*$`, "u");

/** True for the key of a recorded dispatch (`dispatchKey`). */
export function isDispatchKey(key: string): boolean {
  return DISPATCH_KEY.test(key);
}

/** The history key of the nth budget spend (1-based, run/budget.ts); here because a rerun mark names them too. */
export function budgetKey(n: number): string {
  return `${RESERVED_STEP_PREFIX}budget#${n}`;
}

const BUDGET_KEY = new RegExp(`^${RESERVED_STEP_PREFIX}budget#(\\d+)$`, "u");

/** The occurrence n of a budget entry's key (`budgetKey`), or undefined for any other key. */
export function budgetEntryIndex(key: string): number | undefined {
  const m = BUDGET_KEY.exec(key);
  return m === null ? undefined : Number(m[1]);
}

/** The body's step keys among `keys` (phasekit's own left out), in their order: what people are shown and pick from. */
export function bodyStepKeys(keys: readonly string[]): string[] {
  return keys.filter((k) => !isReservedStepKey(k));
}

/** The hint of a "no such step" error: a few of the body's step keys `phasekit show` lists, never phasekit's own. */
export function pickStepHint(run: string, keys: readonly string[]): string {
  const some = bodyStepKeys(keys).slice(0, 8);
  return some.length === 0 ? `run ${run} has recorded no step of its body yet` : `pick a step key from \`phasekit show ${run}\` (e.g. ${some.join(", ")})`;
}

/**
 * The refusal of a step key a person named that is phasekit's own (a rerun's `from`, a fork's `at`): the key
 * names no step of the body, `phasekit show` hides it, and time travel starts at a step. Undefined for a body's key.
 */
export function reservedKeyRefusal(
  key: string,
  at: { scope: string; action: "rerun" | "fork"; field: string; run: string; file?: string | undefined; keys: readonly string[] },
): WorkflowError | undefined {
  if (!isReservedStepKey(key)) return undefined;
  const where = at.file ?? `run ${at.run}`;
  return workflowError(at.scope, "INVALID_OPTIONS", `"${key}" in ${where} is an entry phasekit keeps for itself, not a step of the run: a ${at.action} starts at a step.`, {
    ...(at.file === undefined ? {} : { file: at.file }),
    field: at.field,
    value: key,
    hint: pickStepHint(at.run, at.keys),
  });
}
