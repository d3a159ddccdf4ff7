/**
 * The payload of the last approval a pi run passed, for the `{approval}` variable of the next phases'
 * instructions. It is a session entry (`workflow:approval`), written when the approve gate lets the run go, so it
 * follows the session tree and `pi -c` like the state does.
 */
import type { BranchEntry } from "./host.js";

/** The session entry holding an approval's payload. */
export const APPROVAL_ENTRY = "workflow:approval";

/** What the entry holds. */
export interface ApprovalEntry {
  taskId: string;
  phaseId: string;
  data: unknown;
}

/** The payload of the newest approval of `taskId` on the branch (undefined: none yet). */
export function approvalOnBranch(branch: readonly BranchEntry[], taskId: string): unknown {
  for (let i = branch.length - 1; i >= 0; i--) {
    const e = branch[i] as { type?: string; customType?: string; data?: ApprovalEntry } | undefined;
    if (e?.type === "custom" && e.customType === APPROVAL_ENTRY && e.data?.taskId === taskId) return e.data.data;
  }
  return undefined;
}
