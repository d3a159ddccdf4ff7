/** Valid workflow.json inputs for tests. */
import type { WorkflowMetadataInput } from "../../src/store/metadata-schema.js";

/** A valid metadata input for `slug`, with a state payload whose size grows with `padding`. */
export function sampleMetadata(slug: string, step = 0, padding = 0): WorkflowMetadataInput {
  return {
    slug,
    ownerTool: "sf_team_auto",
    currentTool: "sf_team_implement",
    status: "running",
    phase: "implement",
    currentStepId: `step:${step}`,
    ...(step > 0 ? { lastCompletedStepId: `step:${step - 1}` } : {}),
    branch: "feature/x",
    createdAt: "2026-01-02T03:04:05.000Z",
    updatedAt: new Date(Date.UTC(2026, 0, 2, 3, 4, 5) + step * 1000).toISOString(),
    state: { step, notes: "n".repeat(padding), path: [{ workflow: "release", index: step % 7 }] },
  };
}
