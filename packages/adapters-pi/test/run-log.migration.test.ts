import { describe, it, expect } from "vitest";
import { cpSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { openRunLog } from "../src/store/run-log/run-log.js";

// Frozen: written by the checkpoint store before the run log existed (build and test completed, deploy failed).
const FIXTURE = fileURLToPath(new URL("./fixtures/legacy-run-v1", import.meta.url));

function copyOfFixture(): string {
  const runDir = path.join(mkdtempSync(path.join(tmpdir(), "phasekit-legacy-")), "run");
  cpSync(FIXTURE, runDir, { recursive: true });
  return runDir;
}

describe("run log migration from the checkpoint-log format (frozen fixture)", () => {
  it("opens an old run folder, reuses its completed steps, reruns the failed one, and continues", async () => {
    const runDir = copyOfFixture();
    const before = readFileSync(path.join(runDir, "checkpoints.ndjson"), "utf8");
    const rerun = (): never => {
      throw new Error("a completed legacy step was rerun");
    };
    const log = await openRunLog({ runDir });
    expect(await log.step("build", { target: "dist" }, rerun)).toMatchObject({ reused: true, output: { files: 3, ok: true } });
    expect(await log.step("test", { suite: "all" }, rerun)).toMatchObject({ reused: true, output: ["a.test.ts", "b.test.ts"] });
    expect(await log.step("deploy", { env: "prod" }, () => "deployed")).toMatchObject({ reused: false, reason: "failed", entry: { attempt: 2 } });
    expect(await log.step("notify", {}, () => "sent")).toMatchObject({ reused: false, reason: "no-record" });
    await log.close();
    // The old files are evidence and stay as they were; the next open continues from the run log alone.
    expect(readFileSync(path.join(runDir, "checkpoints.ndjson"), "utf8")).toBe(before);
    const again = await openRunLog({ runDir });
    for (const [key, input] of [["build", { target: "dist" }], ["test", { suite: "all" }], ["deploy", { env: "prod" }], ["notify", {}]] as const) {
      expect((await again.step(key, input, rerun)).reused, key).toBe(true);
    }
    await again.compact();
    await again.close();
    const third = await openRunLog({ runDir });
    expect(await third.step("build", { target: "dist" }, rerun)).toMatchObject({ reused: true, output: { files: 3, ok: true } });
    await third.close();
  });

  it("a changed input after migration reruns the step, as before", async () => {
    const runDir = copyOfFixture();
    const log = await openRunLog({ runDir });
    expect(await log.step("build", { target: "other" }, () => "x")).toMatchObject({ reused: false, reason: "input-changed" });
    await log.close();
  });
});
