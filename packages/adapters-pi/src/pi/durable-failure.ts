/** The plan-folder failure message of the pi extension (durable-runs.ts): what failed, the file, and the fix. */
import * as fs from "node:fs";
import * as path from "node:path";
import type { WorkflowError } from "@phasekit/core";
import type { PlanStore } from "../store/plan-store.js";

/**
 * A plan-folder failure as the user can act on it: what failed, the file, and the fix. A plan root that exists
 * but is not a folder is the common case (a stray file named like it) and gets its own fix. `meanwhile`: what holds
 * until it is fixed.
 */
export function failed(
  store: PlanStore,
  slug: string,
  error: Partial<WorkflowError> & { message: string },
  verb = "could not use",
  meanwhile = "Until then the run is kept in this session only.",
): { ok: false; kind: "failed"; message: string } {
  const details = (error.details ?? {}) as { file?: unknown; hint?: unknown };
  const file = typeof details.file === "string" ? details.file : store.planRoot;
  let fix = typeof details.hint === "string" ? details.hint : "check that folder's permissions and free space";
  try {
    if (!fs.statSync(store.planRoot).isDirectory()) fix = `${store.planRoot} is a file, not a folder: move it away, or set another plan root (PHASEKIT_PLAN_ROOT)`;
  } catch {
    // not an fs path (another store), or missing: the store's own hint stands
  }
  const code = typeof error.code === "string" ? ` [${error.code}]` : "";
  // A plan root is a path; another store (PostgreSQL through PHASEKIT_STORE) is named by its label.
  const where = path.isAbsolute(store.planRoot) ? `the plan folder of run ${slug}${code} (${file})` : `the store ${store.planRoot} for run ${slug}${code}`;
  const said = withoutFix(error.message);
  return {
    ok: false,
    kind: "failed",
    message: `[phasekit] ${verb} ${where}: ${said}. Fix: ${fix.replace(/[.\s]+$/, "")}. ${meanwhile}`,
  };
}

/** Whatever a store threw, as an error `failed` can word (a WorkflowError keeps its code and details). */
export function thrownError(error: unknown): Partial<WorkflowError> & { message: string } {
  if (typeof error === "object" && error !== null && typeof (error as { message?: unknown }).message === "string") return error as Partial<WorkflowError> & { message: string };
  return { message: String(error) };
}

/** An error's words without the "Fix: <hint>" core's messages may end with, nor the final stop: a message gives one fix, the most specific. */
export function withoutFix(message: string): string {
  return message.replace(/\s*Fix: [\s\S]*$/, "").replace(/[.\s]+$/, "");
}
