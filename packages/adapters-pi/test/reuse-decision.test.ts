/**
 * The reuse-or-rerun decision, written once (src/store/reuse-decision.ts) and called by the fs run log and the
 * PostgreSQL store; and the commit-record check both stores share.
 */
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { createFsPlanStore } from "../src/index.js";
import { decideStep, type PriorStep } from "../src/store-kit.js";
import { openRunLog } from "../src/plan-folder.js";

const IN = "v1:sha256:" + "a".repeat(64);
const OTHER = "v1:sha256:" + "b".repeat(64);
const OUT = "v1:sha256:" + "c".repeat(64);
const rec = (status: PriorStep["status"], attempt: number, input = IN, out?: string): PriorStep => ({ status, attempt, inputFingerprint: input, ...(out ? { outputFingerprint: out } : {}) });

describe("decideStep", () => {
  it.each([
    ["no record", undefined, IN, { verify: false, reason: "no-record", attempt: 1 }],
    ["started, same input: the next attempt", rec("started", 2), IN, { verify: false, reason: "started", attempt: 3 }],
    ["failed, same input: the next attempt", rec("failed", 1), IN, { verify: false, reason: "failed", attempt: 2 }],
    ["failed, new input: attempt 1 again", rec("failed", 4), OTHER, { verify: false, reason: "failed", attempt: 1 }],
    ["completed, new input", rec("completed", 3, IN, OUT), OTHER, { verify: false, reason: "input-changed", attempt: 1 }],
    ["completed without an output fingerprint", rec("completed", 1), IN, { verify: false, reason: "artifact-missing", attempt: 1 }],
    ["completed, same input: verify the stored output", rec("completed", 2, IN, OUT), IN, { verify: true, outputFingerprint: OUT, attempt: 1 }],
  ] as const)("%s", (_name, previous, input, expected) => {
    expect(decideStep(previous, input)).toEqual(expected);
  });

  it("is what the fs run log does: reasons and attempts of a failing, then changed, then reused step", async () => {
    const log = await openRunLog({ runDir: await mkdtemp(path.join(tmpdir(), "phasekit-decide-")) });
    try {
      await expect(log.step("s", { n: 1 }, () => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
      expect(log.entry("s")).toMatchObject({ status: "failed", attempt: 1, error: "Error: boom" });
      expect(await log.step("s", { n: 1 }, () => 1)).toMatchObject({ reused: false, reason: "failed", entry: { attempt: 2 } });
      expect(await log.step("s", { n: 2 }, () => 2)).toMatchObject({ reused: false, reason: "input-changed", entry: { attempt: 1 } });
      expect(await log.step("s", { n: 2 }, () => 3)).toMatchObject({ reused: true, output: 2 });
    } finally {
      await log.close();
    }
  });
});

describe("commit records on the fs store", () => {
  it("refuses a commit intent whose files is a string (it used to be spread into one-letter paths)", async () => {
    const store = createFsPlanStore({ repoRoot: await mkdtemp(path.join(tmpdir(), "phasekit-commit-")) });
    const l = await store.lock("run", { owner: { tool: "t" } });
    if (!l.ok) throw l.error;
    try {
      const cps = await store.checkpoints("run", { now: () => new Date() });
      await expect(cps.recordCommitIntent({ id: "c", message: "m", files: "a.ts" as never })).rejects.toMatchObject({ code: "INVALID_OPTIONS", details: { field: "files", value: "a.ts" } });
      expect(await cps.commits()).toEqual([]);
    } finally {
      await l.lock.release();
      await store.close();
    }
  });
});
