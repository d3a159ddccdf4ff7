/**
 * An optional option given as an explicit `undefined` (`planRoot: process.env.PLAN_ROOT`) means the same as leaving
 * it out, at run time as in the types (test/types/options-undefined.types.ts): the default applies, nothing refuses it.
 */
import { describe, expect, it } from "vitest";
import { createReporter, runWorkflow, type ReporterStream, type RunWorkflowOptions } from "../src/index.js";
import { useTempRepos } from "./helpers/temp-repos.js";

const tempRepo = useTempRepos("phasekit-undef-");

// Every optional field of RunWorkflowOptions, set to undefined: a field added later and forgotten here is caught by
// the type-level test, which walks the type.
const OPTIONAL_RUN_FIELDS = [
  "target", "parentSlug", "worktree", "branch", "baseRef", "lock", "reenter", "maxSteps", "maxAttempts", "workflow",
  "budgets", "waitPollMs", "clock", "fs", "store", "promptForResume", "onLockHeld", "createReporter", "resolveBaseline",
  "onSuccess", "onError", "beforeReporterDispose", "afterReporterDispose", "afterLockRelease", "onHookFailure",
  "planRoot", "extraPlanRoots", "homeDir", "ownerTool", "allowOwnerTakeoverFrom",
] as const;

describe("explicit undefined in options", () => {
  it("runWorkflow with every optional option undefined runs with the defaults", async () => {
    const repoRoot = tempRepo();
    const options = { repoRoot, toolName: "undef-tool", ...Object.fromEntries(OPTIONAL_RUN_FIELDS.map((k) => [k, undefined])) } as RunWorkflowOptions<number>;
    const result = await runWorkflow(options, async (ctx) => (await ctx.step("one", {}, () => 41)) + 1);
    expect(result.status).toBe("completed");
    expect(result.status === "completed" && result.result).toBe(42);
  });

  it("runWorkflow's lock with undefined timings takes the default ones", async () => {
    const repoRoot = tempRepo();
    const result = await runWorkflow({ repoRoot, toolName: "undef-tool", lock: { staleMs: undefined, updateMs: undefined, retries: undefined } }, async () => "ok");
    expect(result.status).toBe("completed");
  });

  it("createReporter with an undefined ttl for a level keeps that level's default lifetime", () => {
    const lines: string[] = [];
    const stream: ReporterStream = { write: (c: string) => lines.push(c) };
    const seen: number[] = [];
    const reporter = createReporter({ ttlMs: { info: undefined, warning: 5_000 }, stream, headless: false, onChange: (m) => seen.push(...m.map((x) => x.expiresAt - x.createdAt)) });
    reporter.info("hello");
    reporter.warning("careful");
    reporter.dispose();
    expect(seen).toContain(8_000);
    expect(seen).toContain(5_000);
  });
});
