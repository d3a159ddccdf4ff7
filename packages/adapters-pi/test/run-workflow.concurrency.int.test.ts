import { describe, it, expect } from "vitest";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { METADATA_FILE } from "../src/store/plan-store.js";
import { readWorkflowMetadata } from "../src/store/metadata.js";
import { readRunSteps } from "../src/store/run-steps.js";
import { spawnLockChild, type LockChild } from "./helpers/lock-children.js";

const ROUNDS = process.env.CI === "true" ? 10 : 4;

interface Report {
  event: string;
  pid?: number;
  code?: string;
  status?: string;
  holder?: { tool?: string; pid?: number } | null;
  message?: string;
}

const parse = (line: string): Report => JSON.parse(line) as Report;

/** The first decisive report of a racer: it ran the body, or it was refused. */
async function outcomeOf(child: LockChild): Promise<Report> {
  return parse(await child.next(/"event":"(body|rejected)"/, true));
}

describe("runWorkflow: two processes start the same run at once", () => {
  it(`exactly one runs the body and the other gets LOCKED naming the holder (${ROUNDS} rounds)`, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const repoRoot = mkdtempSync(path.join(tmpdir(), "phasekit-run-race-"));
      const slug = `race-${round}`;
      const racers = [spawnLockChild("run-racer.mjs", [repoRoot, slug]), spawnLockChild("run-racer.mjs", [repoRoot, slug])];
      try {
        await Promise.all(racers.map((r) => r.next(/"event":"ready"/, true)));
        for (const r of racers) r.send("go");
        const outcomes = await Promise.all(racers.map(outcomeOf));
        const winners = racers.filter((_, i) => outcomes[i]?.event === "body");
        const losers = outcomes.filter((o) => o.event === "rejected");
        expect(winners, JSON.stringify(outcomes)).toHaveLength(1);
        expect(losers).toHaveLength(1);
        const winner = winners[0] as LockChild;
        const loser = racers.find((r) => r !== winner) as LockChild;
        const refused = losers[0] as Report;
        expect(refused.code, refused.message).toBe("LOCKED");
        expect(refused.holder).toMatchObject({ tool: "racer", pid: winner.proc.pid });
        expect(refused.message).toContain(`pid ${winner.proc.pid}`);
        // onLockHeld was told before the error was thrown.
        expect(loser.lines.map(parse).map((r) => r.event)).toEqual(["ready", "lock-held", "rejected"]);

        winner.send("finish");
        const end = parse(await winner.next(/"event":"end"/, true));
        expect(end.status).toBe("completed");
        for (const r of racers) r.end();
        for (const r of racers) {
          const exit = await r.exited;
          expect(exit, exit.stderr).toMatchObject({ code: 0, signal: null });
        }
        // The winner's run is what the folder holds, and the loser never wrote a step.
        const runDir = path.join(repoRoot, "ai_plan", slug);
        const meta = await readWorkflowMetadata(path.join(runDir, METADATA_FILE));
        expect(meta.ok && meta.metadata).toMatchObject({ status: "completed", currentTool: "racer" });
        const records = await readRunSteps(runDir);
        expect(records.map((r) => [r.stepId, r.status, r.attempt])).toEqual([["only", "completed", 1]]);
      } finally {
        for (const r of racers) {
          r.proc.kill("SIGKILL");
          r.end();
        }
      }
    }
  }, 120_000);
});
