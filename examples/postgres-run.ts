/**
 * docs/postgres.md's example: the same runWorkflow body as on the plan folder, with the store swapped for
 * PostgreSQL. Any machine that reaches the database can resume the run.
 */
import { runWorkflow, type RunResult } from "@phasekit/adapters-pi";
import { openPostgresPlanStore } from "@phasekit/store-postgres";

/** Runs (or resumes) the run `release-42` kept in PostgreSQL; returns how it ended. */
export async function releaseOnPostgres(connectionString: string, repoRoot: string, namespace = "team"): Promise<RunResult<string>> {
  // Opening checks the schema version (the owner migrated it once with migrate() or the package's sql/ files).
  const store = await openPostgresPlanStore({ connectionString, namespace });
  try {
    return await runWorkflow({ repoRoot, toolName: "release", target: "release-42", store }, async (ctx) => {
      const plan = await ctx.step("plan", { issue: 42 }, () => ({ files: ["src/a.ts"] }));
      await ctx.step("apply", plan, (signal) => (signal.aborted ? "skipped" : `applied ${plan.files.length} file(s)`));
      return "released";
    });
  } finally {
    // runWorkflow never closes a store it was given: the caller does.
    await store.close();
  }
}
