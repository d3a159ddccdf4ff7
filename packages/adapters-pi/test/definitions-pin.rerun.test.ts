/**
 * A rerun mark that covers the pinned definitions (`phasekit:pi-definitions`, recorded after a body step when a
 * run took a workflow later) must not turn reading the pin into running it: the pin stays readable evidence.
 * `phasekit rerun` no longer names the pin (reuse-decision.ts keysFrom); a mark an earlier version wrote does.
 */
import { compileDefinitions, isWorkflowError, type WorkflowRegistry } from "@phasekit/core";
import { createReporter, rerunFrom, runWorkflow } from "@phasekit/adapters-pi";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { PIN_KEY } from "../src/run/definitions-pin.js";
import { readRunLog } from "../src/store/run-log/reader.js";
import { useTempRepos } from "./helpers/temp-repos.js";
import { writeLegacyMark } from "./helpers/legacy-rerun-mark.js";

const repo = useTempRepos("pk-rerun-pin-");
const phase = (id: string) => ({ id, name: id.toUpperCase(), instructions: `do ${id}` });
function defs(ids: string[]): WorkflowRegistry {
  const r = compileDefinitions({ ship: { name: "Ship", loopable: false, phases: ids.map(phase) } });
  if (!r.ok) throw new Error(r.problems.map((p) => p.message).join("\n"));
  return r.registry;
}
const base = (root: string) => ({ repoRoot: root, target: "r1", toolName: "ship-bot", createReporter: () => createReporter({ onChange: () => undefined }) });
const withWf = (root: string, ids: string[]) => ({ ...base(root), workflow: { registry: defs(ids), workflowKey: "ship", taskDescription: "ship it" } });

describe("rerun over a pinned run", () => {
  it("a superseded pin is not run: the resume keeps its pinned definitions (or a typed error) and the pin record stays", async () => {
    const root = repo();
    await runWorkflow(base(root), async (ctx) => {
      await ctx.step("a", null, () => 1);
      throw new Error("stop here");
    }).catch(() => undefined);
    await runWorkflow(withWf(root, ["plan", "build"]), async (ctx) => {
      await ctx.step("a", null, () => 1);
      throw new Error("stop again");
    }).catch(() => undefined);
    const runDir = path.join(root, "ai_plan", "r1");
    const keysBefore = (await readRunLog(runDir))!;
    const order = keysBefore.entries().map((e) => e.key);
    keysBefore.close();
    expect(order.indexOf(PIN_KEY)).toBeGreaterThan(order.indexOf("a"));
    // A rerun from "a" leaves the pin out of its mark now; one an earlier version wrote still names it.
    const marked = await rerunFrom({ repoRoot: root, target: "r1", from: "a" });
    expect(marked.keys).not.toContain(PIN_KEY);
    await writeLegacyMark(runDir, order.slice(order.indexOf("a")));
    const err = await runWorkflow(withWf(root, ["plan", "lint", "build"]), async (ctx) => {
      await ctx.step("a", null, () => 1);
      return "x";
    }).then(
      () => undefined,
      (e: unknown) => e,
    );
    // Before: a raw Error ("could not be read back"), and the pin's record overwritten by a failed attempt.
    const view = (await readRunLog(runDir))!;
    const pin = view.entry(PIN_KEY);
    expect(pin?.status).toBe("completed");
    view.close();
    // Without the pin it can read, the run is refused as a run with no pin is, and told what to pass.
    expect(isWorkflowError(err) ? err.code : String(err)).toBe("DEFINITIONS_CHANGED");
  });
});
