/**
 * Checkpoint costs: an fsynced record append (and a whole `step`) at 10 vs 10,000 existing records, which must
 * cost the same (no whole-file rewrite per step); and a fingerprint (strict validation + stable stringify +
 * sha256) of a ~100 KB value against plain `JSON.stringify` + sha256.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createHash } from "node:crypto";
import { medians, type BenchRow, type BenchSuite } from "../../../bench/harness.js";
import { appendRecord, rewriteLog, CHECKPOINT_LOG_FILE, type StepRecord } from "../src/store/checkpoint-log.js";
import { createCheckpointStore, type CheckpointStore } from "../src/store/checkpoints.js";
import { fingerprint } from "../src/store/fingerprint.js";
import { nodeFs } from "../src/io/fs-port.js";

const FP = `v1:sha256:${"ab".repeat(32)}`;

function record(i: number): StepRecord {
  return { v: 1, kind: "step", stepId: `step:${i}`, status: "completed", attempt: 1, inputFingerprint: FP, outputFingerprint: FP, artifact: `artifacts/${"ab".repeat(32)}.json`, startedAt: "2026-01-01T00:00:00.000Z", finishedAt: "2026-01-01T00:00:01.000Z" };
}

async function runWith(records: number): Promise<{ file: string; store: CheckpointStore }> {
  const runDir = mkdtempSync(path.join(tmpdir(), `phasekit-bench-ckpt-${records}-`));
  const file = path.join(runDir, CHECKPOINT_LOG_FILE);
  await rewriteLog(nodeFs, file, Array.from({ length: records }, (_, i) => record(i)));
  let t = 0;
  const store = createCheckpointStore({ runDir, now: () => new Date(Date.UTC(2026, 0, 1) + t++), autoCompactAfter: 0 });
  await store.records(); // load (and fold) before measuring
  return { file, store };
}

/** A ~100 KB plain-JSON value shaped like a plan: nested objects, arrays, strings and numbers. */
function hundredKb(): unknown {
  const milestones = Array.from({ length: 120 }, (_, i) => ({
    id: `M${i}`,
    title: `Milestone ${i}: make the thing ${i} work end to end`,
    done: i % 3 === 0,
    estimate: i * 1.5,
    tasks: Array.from({ length: 6 }, (_, j) => ({ id: `${i}.${j}`, text: "x".repeat(60), files: [`src/a${j}.ts`, `test/a${j}.test.ts`] })),
  }));
  return { schema: 1, name: "bench", milestones };
}

export const suite: BenchSuite = {
  title: "Checkpoints",
  description:
    "Append = one canonical NDJSON line, written and fsynced (the log keeps growing while measured). step = a new step id: started + completed records and an artifact (deduplicated after the first). Fingerprint input ≈ 100 KB.",
  async run(): Promise<BenchRow[]> {
    const small = await runWith(10);
    const large = await runWith(10_000);
    let n = 0;
    const appends = await medians({
      "append@10": () => appendRecord(nodeFs, small.file, record(++n)),
      "append@10000": () => appendRecord(nodeFs, large.file, record(++n)),
      "step@10": () => small.store.step(`new:${++n}`, { n }, () => ({ ok: true })),
      "step@10000": () => large.store.step(`new:${++n}`, { n }, () => ({ ok: true })),
    }, { time: 1_500 });
    const value = hundredKb();
    const bytes = JSON.stringify(value).length;
    const hashes = await medians({
      fingerprint: () => fingerprint(value),
      "JSON.stringify+sha256": () => createHash("sha256").update(JSON.stringify(value)).digest("hex"),
    });
    const at = (k: string) => appends[k] ?? NaN;
    return [
      { subject: "record append at 10,000 records", baseline: "record append at 10 records", subjectNs: at("append@10000"), baselineNs: at("append@10"), goal: "≤ 1.5×" },
      { subject: "step() at 10,000 records", baseline: "step() at 10 records", subjectNs: at("step@10000"), baselineNs: at("step@10"), goal: "≤ 1.5×" },
      { subject: `fingerprint of ${Math.round(bytes / 1024)} KB`, baseline: "JSON.stringify + sha256", subjectNs: hashes.fingerprint ?? NaN, baselineNs: hashes["JSON.stringify+sha256"] ?? NaN },
    ];
  },
};
