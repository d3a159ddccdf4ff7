/**
 * A damaged stored output of the pinned definitions (`phasekit:pi-definitions`) is a typed CORRUPT_FILE naming the
 * file, and reading it leaves the pin's record as it was (never a failed attempt written over it).
 */
import { compileDefinitions, isWorkflowError, type WorkflowRegistry } from "@phasekit/core";
import { createReporter, runWorkflow } from "@phasekit/adapters-pi";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { PIN_KEY } from "../src/run/definitions-pin.js";
import { readRunLog } from "../src/store/run-log/reader.js";
import { useTempRepos } from "./helpers/temp-repos.js";

const repo = useTempRepos("pk-damaged-pin-");
const phase = (id: string) => ({ id, name: id.toUpperCase(), instructions: `do ${id} `.repeat(400) });
function defs(ids: string[]): WorkflowRegistry {
  const r = compileDefinitions({ ship: { name: "Ship", loopable: false, phases: ids.map(phase) } });
  if (!r.ok) throw new Error(r.problems.map((p) => p.message).join("\n"));
  return r.registry;
}
const base = (root: string) => ({ repoRoot: root, target: "r1", toolName: "ship-bot", createReporter: () => createReporter({ onChange: () => undefined }) });
const withWf = (root: string, ids: string[]) => ({ ...base(root), workflow: { registry: defs(ids), workflowKey: "ship", taskDescription: "ship it" } });

describe("a damaged pin", () => {
  it("is CORRUPT_FILE naming the file, and the pin's record stays completed", async () => {
    const root = repo();
    await runWorkflow(withWf(root, ["plan", "build"]), async (ctx) => {
      await ctx.step("a", null, () => 1);
      throw new Error("stop here");
    }).catch(() => undefined);
    const runDir = path.join(root, "ai_plan", "r1");
    // The pin's output is stored in the run log's segment: change bytes of it (same length), as a bad disk would.
    const seg = path.join(runDir, "runlog", readdirSync(path.join(runDir, "runlog")).find((n) => n.endsWith(".seg"))!);
    const bytes = readFileSync(seg, "latin1");
    expect(bytes).toContain("do build do build");
    writeFileSync(seg, bytes.replace("do build do build", "do BUILD do build"), "latin1");
    const err = await runWorkflow(withWf(root, ["plan", "lint", "build"]), async (ctx) => {
      await ctx.step("a", null, () => 1);
      return "x";
    }).then(
      () => undefined,
      (e: unknown) => e,
    );
    const view = (await readRunLog(runDir))!;
    const pin = view.entry(PIN_KEY);
    view.close();
    expect(pin?.status).toBe("completed");
    expect(isWorkflowError(err) ? { code: err.code, file: (err.details as { file?: string }).file !== undefined } : String(err)).toEqual({ code: "CORRUPT_FILE", file: true });
  });
});
