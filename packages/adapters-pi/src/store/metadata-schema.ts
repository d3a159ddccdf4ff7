/**
 * The persisted shape of `<planRoot>/<slug>/workflow.json`, version 1. The schema is the type; a newer
 * `schemaVersion` on disk is refused, never guessed at.
 */
import { z } from "zod";
// The run lifecycle is core's: one list of statuses for the state and for workflow.json.
import { WorkflowStatusSchema as workflowStatusSchema, type WorkflowStatus } from "@phasekit/core";

/** A run's status (core's `WorkflowStatus`). */
export type { WorkflowStatus };

/** The only version this code writes, and the newest it reads. */
export const WORKFLOW_METADATA_VERSION = 1;


const name = z.string().min(1).max(512);
const isoTime = z.iso.datetime({ offset: true });

/** workflow.json v1. Unknown keys are refused so that a typo cannot hide a field. */
export const workflowMetadataSchema = z.strictObject({
  schemaVersion: z.literal(WORKFLOW_METADATA_VERSION),
  slug: name,
  ownerTool: name,
  currentTool: name,
  status: workflowStatusSchema,
  failureReason: z.string().max(10_000).optional(),
  phase: name.optional(),
  currentStepId: name.optional(),
  lastCompletedStepId: name.optional(),
  parentSlug: name.optional(),
  worktree: z.string().min(1).max(4096).optional(),
  branch: name.optional(),
  baseRef: name.optional(),
  createdAt: isoTime,
  updatedAt: isoTime,
  /** +1 on every write: the compare-and-set token. */
  generation: z.int().min(1).max(Number.MAX_SAFE_INTEGER),
  /** The core workflow state when the run carries one: plain JSON, validated by core's schema by the caller. */
  state: z.unknown().optional(),
});

/** A run's metadata as stored in workflow.json. */
export type WorkflowMetadata = z.infer<typeof workflowMetadataSchema>;
/** What a caller passes to a write: the store sets `schemaVersion` and `generation`. */
export type WorkflowMetadataInput = Omit<WorkflowMetadata, "schemaVersion" | "generation">;
