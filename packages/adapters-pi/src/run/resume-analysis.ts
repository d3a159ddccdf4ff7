/**
 * Whether a plan folder can be resumed by a tool, decided from its workflow.json. `runWorkflow` applies the same
 * rules under the plan lock; `analyzeResumeTarget` exposes them without running anything (for a CLI or a prompt).
 */
import { workflowError, type WorkflowError } from "@phasekit/core";
import { createFsPlanStore } from "../store/plan-store.js";
import { resolveRunTarget, type PlanRootsOptions, type RunLocation } from "./target.js";
import type { WorkflowMetadata } from "../store/metadata-schema.js";

export { FINISHED_STATUSES, finishedError } from "../store/run-status.js";

/** Who wants to run: the invoked tool, the owner it claims, and the owners it may take a folder over from. */
export interface OwnershipClaim {
  invokedTool: string;
  /** The owner recorded for a new run; a nested phase passes its parent's tool (default `invokedTool`). */
  ownerTool?: string | undefined;
  /** Owners whose folders this tool may claim (a deliberate hand-off, e.g. plan → implement). */
  allowOwnerTakeoverFrom?: readonly string[] | undefined;
}

/** The owner decision: keep the recorded owner, claim the folder, or refuse. */
export type OwnershipDecision =
  | { ok: true; ownerTool: string; takeover: boolean }
  | { ok: false; error: WorkflowError };

/** Applies the owner rules to a run's metadata. */
export function decideOwnership(metadata: WorkflowMetadata, claim: OwnershipClaim): OwnershipDecision {
  const owner = metadata.ownerTool;
  const claimed = claim.ownerTool ?? claim.invokedTool;
  if (owner === claim.invokedTool || owner === claimed) return { ok: true, ownerTool: owner, takeover: false };
  if (claim.allowOwnerTakeoverFrom?.includes(owner)) return { ok: true, ownerTool: claimed, takeover: true };
  return {
    ok: false,
    error: workflowError("resume", "OWNED_BY_OTHER", `run ${metadata.slug} is owned by ${owner}; ${claim.invokedTool} may not resume it.`, {
      value: owner,
      field: "ownerTool",
      hint: `resume it with ${owner}, or list ${owner} in allowOwnerTakeoverFrom for a deliberate hand-off`,
    }),
  };
}

/** What `analyzeResumeTarget` finds. */
export type ResumeAnalysis =
  | { kind: "not-found"; location: RunLocation | null }
  | { kind: "ambiguous"; candidates: RunLocation[]; error: WorkflowError }
  | { kind: "invalid"; error: WorkflowError }
  | { kind: "unreadable"; location: RunLocation; error: WorkflowError }
  | { kind: "owned-by-other"; location: RunLocation; metadata: WorkflowMetadata; error: WorkflowError }
  | {
      kind: "resumable";
      location: RunLocation;
      metadata: WorkflowMetadata;
      status: WorkflowMetadata["status"];
      phase: string | null;
      currentStepId: string | null;
      lastCompletedStepId: string | null;
      takeover: boolean;
    };

/** Options of `analyzeResumeTarget`. */
export type AnalyzeResumeOptions = PlanRootsOptions & OwnershipClaim & { target: string };

/** Steps 1 and 3 of a run (resolve the target, read and judge its workflow.json) without taking the lock. */
export async function analyzeResumeTarget(options: AnalyzeResumeOptions): Promise<ResumeAnalysis> {
  const target = await resolveRunTarget(options);
  if (target.kind === "invalid") return { kind: "invalid", error: target.error };
  if (target.kind === "ambiguous") return { kind: "ambiguous", candidates: target.candidates, error: target.error };
  if (target.kind === "new") return { kind: "not-found", location: target.location };
  const { location } = target;
  const store = createFsPlanStore({ repoRoot: options.repoRoot, planRoot: location.planRoot, ...(options.fs ? { fs: options.fs } : {}) });
  try {
    const read = await store.readMetadata(location.slug);
    return judge(location, read, options);
  } finally {
    await store.close();
  }
}

/** The resume decision for metadata already read (used by `runWorkflow` under the lock). */
export function judge(
  location: RunLocation,
  read: { ok: true; metadata: WorkflowMetadata | null } | { ok: false; error: WorkflowError },
  claim: OwnershipClaim,
): ResumeAnalysis {
  if (!read.ok) return { kind: "unreadable", location, error: read.error };
  const metadata = read.metadata;
  if (metadata === null) return { kind: "not-found", location };
  const owner = decideOwnership(metadata, claim);
  if (!owner.ok) return { kind: "owned-by-other", location, metadata, error: owner.error };
  return {
    kind: "resumable",
    location,
    metadata,
    status: metadata.status,
    phase: metadata.phase ?? null,
    currentStepId: metadata.currentStepId ?? null,
    lastCompletedStepId: metadata.lastCompletedStepId ?? null,
    takeover: owner.takeover,
  };
}
