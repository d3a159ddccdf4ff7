/** A durable workflow.json update (compare-and-set included) against the bare syscalls of an atomic replace. */
import { mkdtempSync } from "node:fs";
import { open, rename } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { BenchSuite } from "../../../bench/harness.js";
import { medians } from "../../../bench/harness.js";
import { serializeWorkflowMetadata, writeWorkflowMetadata } from "../src/store/metadata.js";
import type { WorkflowMetadataInput } from "../src/store/metadata-schema.js";

function input(step: number): WorkflowMetadataInput {
  return {
    slug: "bench-run", ownerTool: "bench", currentTool: "bench", status: "running", phase: "implement",
    currentStepId: `step:${step}`, createdAt: "2026-01-01T00:00:00.000Z", updatedAt: "2026-01-01T00:00:01.000Z",
    state: { step, path: [{ workflow: "release", index: step % 5 }], notes: "n".repeat(1500) },
  };
}

export const suite: BenchSuite = {
  title: "workflow.json durable update",
  description:
    "writeWorkflowMetadata (read + validate current generation, zod-validate, canonical encode, exclusive temp, write, fsync, close, rename, fsync dir) of a ~2 KB document vs the raw syscalls (open, write, fsync, close, rename, fsync dir) of the same bytes.",
  async run() {
    const dir = mkdtempSync(path.join(tmpdir(), "phasekit-bench-wf-"));
    const file = path.join(dir, "workflow.json");
    const raw = path.join(dir, "raw.json");
    let gen: number | null = null;
    let step = 0;
    const first = await writeWorkflowMetadata(file, input(0), { expectedGeneration: null });
    if (!first.ok) throw first.error;
    gen = first.metadata.generation;
    const bytes = Buffer.from(serializeWorkflowMetadata(first.metadata));
    const m = await medians({
      subject: async () => {
        const w = await writeWorkflowMetadata(file, input(++step), { expectedGeneration: gen });
        if (!w.ok) throw w.error;
        gen = w.metadata.generation;
      },
      baseline: async () => {
        const tmp = `${raw}.tmp`;
        const h = await open(tmp, "w", 0o600);
        await h.write(bytes, 0, bytes.length, null);
        await h.sync();
        await h.close();
        await rename(tmp, raw);
        const d = await open(dir, "r");
        await d.sync();
        await d.close();
      },
    });
    return [
      {
        subject: "writeWorkflowMetadata (CAS, ~2 KB)",
        baseline: "open+write+fsync+close+rename+fsync dir",
        subjectNs: m.subject ?? NaN,
        baselineNs: m.baseline ?? NaN,
        goal: "≤ 1.3×",
      },
    ];
  },
};
