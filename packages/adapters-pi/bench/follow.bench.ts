/** A follower's look at a long run's journal: only what is new since its last look, against the whole journal. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { BenchSuite } from "../../../bench/harness.js";
import { medians } from "../../../bench/harness.js";
import { createFsPlanStore } from "../src/store/plan-store.js";
import { journalSentences } from "../src/cli/journal-text.js";
import type { WorkflowMetadataInput } from "../src/store/metadata-schema.js";

const GENERATIONS = 1_000;

function input(step: number): WorkflowMetadataInput {
  return {
    slug: "followed", ownerTool: "bench", currentTool: "bench", status: "running", phase: "implement",
    currentStepId: `step:${step}`, createdAt: "2026-01-01T00:00:00.000Z", updatedAt: new Date(Date.UTC(2026, 0, 1) + step * 1000).toISOString(),
    state: { step, notes: "n".repeat(4000), path: [{ workflow: "release", index: step % 5 }] },
  };
}

export const suite: BenchSuite = {
  title: "following a run's journal",
  description: `A run with ${GENERATIONS.toLocaleString("en")} metadata generations (~4 KB state each, an event after each) on the fs store, read as \`phasekit journal --follow\`, \`watchRun\` and the inspector's live page read it at each look: \`readJournal(slug, { after })\` past the last entry seen (one new generation and its event), rendered into sentences, against the whole journal rendered the same way (what every look did before).`,
  async run() {
    const repoRoot = mkdtempSync(path.join(tmpdir(), "phasekit-bench-follow-"));
    const store = createFsPlanStore({ repoRoot });
    try {
      const l = await store.lock("followed", { owner: { tool: "bench" } });
      if (!l.ok) throw l.error;
      const via = l.lock.store ?? store;
      let generation: number | null = null;
      for (let i = 0; i < GENERATIONS; i++) {
        const w = await via.writeMetadata("followed", input(i), generation);
        if (!w.ok) throw w.error;
        generation = w.metadata.generation;
        const e = await via.appendJournal("followed", { generation, at: w.metadata.updatedAt, event: "tick", data: { i } });
        if (!e.ok) throw e.error;
      }
      await l.lock.release();
      const whole = await store.readJournal("followed");
      if (!whole.ok) throw whole.error;
      const after = (whole.entries.at(-3)?.seq ?? 0);
      const look = async (options?: { after: number }) => {
        const r = await store.readJournal("followed", options);
        if (!r.ok) throw r.error;
        return journalSentences(r.entries).length;
      };
      if ((await look({ after })) !== 2) throw new Error("a look past the last entry but two should see two entries");
      const m = await medians({ subject: () => look({ after }), baseline: () => look() }, { time: 2_000, iterations: 10 });
      return [
        { subject: `a look with one new generation (readJournal after the last seq seen + sentences), ${GENERATIONS.toLocaleString("en")} generations`, baseline: "the whole journal read and told (each look before)", subjectNs: m.subject ?? NaN, baselineNs: m.baseline ?? NaN, goal: "report" },
      ];
    } finally {
      await store.close();
      rmSync(repoRoot, { recursive: true, force: true });
    }
  },
};
