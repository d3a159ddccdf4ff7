/**
 * History keys phasekit writes for itself beside the body's steps (the workflow's starting state and its
 * dispatches, see run/dispatch-record.ts). Step ids cannot start with the prefix, and views of a run's steps
 * (the CLI, the inspector, `lastStep`) leave these entries out.
 */

/** Step keys in this namespace belong to phasekit; `ctx.step` refuses ids that start with it. */
export const RESERVED_STEP_PREFIX = "phasekit:";

/** True for a history key phasekit wrote for itself (not a step of the body). */
export function isReservedStepKey(key: string): boolean {
  return key.startsWith(RESERVED_STEP_PREFIX);
}
