/**
 * The wait keys' one home (engine/wait-keys.ts): what the waits write is what `phasekit resume-due` parses back.
 * Properties of the pair, then the keys a real run's waits wrote, read back from its history.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { runWorkflow } from "../src/run/run-workflow.js";
import { isReservedStepKey } from "../src/engine/reserved-keys.js";
import { parseWaitKey, waitKey, waitLabel, type WaitKey } from "../src/engine/wait-keys.js";
import { validateStepId } from "../src/io/plan-paths.js";
import { readRunLog } from "../src/store/run-log/reader.js";

// Any name a wait accepts: a step id (io/plan-paths.ts), or none.
const name = fc.oneof(fc.constant(""), fc.stringMatching(/^[A-Za-z0-9_][A-Za-z0-9._:@-]{0,40}$/u).filter((s) => validateStepId(s).ok));
const wait: fc.Arbitrary<WaitKey> = fc.record({
  kind: fc.constantFrom("sleep" as const, "approval" as const),
  role: fc.constantFrom("start" as const, "end" as const, "due" as const),
  name,
  n: fc.integer({ min: 1, max: 1_000_000 }),
});

const temps: string[] = [];
afterEach(() => temps.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

describe("wait keys", () => {
  it("parse(build(k)) is k, for every kind, role, name and occurrence; keys are reserved ones", () => {
    fc.assert(
      fc.property(wait, (k) => {
        const key = waitKey(k);
        expect(isReservedStepKey(key)).toBe(true);
        expect(parseWaitKey(key)).toEqual(k);
      }),
    );
  });

  it("two different waits never share a key", () => {
    fc.assert(
      fc.property(wait, wait, (a, b) => {
        fc.pre(JSON.stringify(a) !== JSON.stringify(b));
        expect(waitKey(a)).not.toBe(waitKey(b));
      }),
    );
  });

  it("no other key parses as a wait's: a body's step ids, phasekit's other keys, near misses", () => {
    fc.assert(
      fc.property(
        name.filter((s) => s !== ""),
        (id) => {
          expect(parseWaitKey(id)).toBeNull();
        },
      ),
    );
    for (const key of ["phasekit:budget#1", "phasekit:dispatch#2", "phasekit:workflow", "phasekit:pi-definitions", "phasekit:sleep", "phasekit:sleep#0", "phasekit:sleep#x", "phasekit:sleep-end#1", "phasekit:approval:#1", "phasekit:sleeping#1", "sleep#1"]) {
      expect(parseWaitKey(key), key).toBeNull();
    }
  });

  it("the keys a run's waits write parse back to those waits (the history resume-due reads)", async () => {
    const repoRoot = mkdtempSync(path.join(tmpdir(), "pk-wait-keys-"));
    temps.push(repoRoot);
    await runWorkflow({ repoRoot, target: "waits", toolName: "t", waitPollMs: 5 }, async (ctx) => {
      await ctx.sleep(0);
      await ctx.waitForApproval("ship", { timeoutMs: 0 });
      await ctx.waitForApproval("ship", { timeoutMs: 0 });
      await ctx.sleep(0);
    });
    const view = await readRunLog(path.join(repoRoot, "ai_plan", "waits"));
    const keys = view?.entries().map((e) => e.key) ?? [];
    view?.close();
    const waits = keys.flatMap((k) => {
      const p = parseWaitKey(k);
      return p === null ? [] : [`${p.role} ${waitLabel(p)} #${p.n}`];
    });
    expect(waits.sort()).toEqual(
      ["start sleep #1", "end sleep #1", "start approval:ship #1", "end approval:ship #1", "start approval:ship #2", "end approval:ship #2", "start sleep #2", "end sleep #2"].sort(),
    );
  });
});
