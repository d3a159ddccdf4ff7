/**
 * Retention's rule, for every store's `gc` (the fs plan folder, PostgreSQL, the memory store): which finished
 * runs are past the limits, in which order, and what a report says. A store only lists its runs, judges whether a
 * holder is live by its own lease, and removes a run where it keeps it; the limits, the order (newest first by the
 * run's own `updatedAt`), the reasons and the rerun rule are decided here once.
 */
import { workflowError } from "@phasekit/core";
import { awaitsItsRerun } from "./rerun-spent.js";

/** Why a run folder was removed. */
export type GcRemovedReason = "beyond-keep" | "older-than" | "dead-fork";
/** Why a folder was kept. */
export type GcKeptReason = "active" | "locked" | "rerun-pending" | "corrupt-metadata" | "no-metadata" | "not-a-run" | "within-limits" | "changed-meanwhile" | "remove-failed";

/** One folder in the report. */
export interface GcEntry<R extends string> {
  /** The run's id; for `dead-fork`, the hidden folder's name. */
  slug: string;
  runDir: string;
  reason: R;
  status?: string;
  updatedAt?: string;
  /** For `corrupt-metadata` and `remove-failed`: what went wrong. */
  error?: string;
}

/** What `gc` did. */
export interface GcReport {
  removed: GcEntry<GcRemovedReason>[];
  kept: GcEntry<GcKeptReason>[];
}

/** The limits of a `gc` call, checked. */
export interface RetentionLimits {
  keep: number | undefined;
  olderThan: number | undefined;
}

/** `keep` and `olderThan` checked: INVALID_OPTIONS naming the field and value, and at least one of them given. */
export function checkRetentionLimits(options: { keep?: unknown; olderThan?: unknown } | null | undefined): RetentionLimits {
  const bad = (field: string, value: unknown, hint: string) => workflowError("gc", "INVALID_OPTIONS", `gc: option ${field} is invalid (${String(value)}).`, { field, value, hint });
  const keep = options?.keep;
  const olderThan = options?.olderThan;
  if (keep !== undefined && !(typeof keep === "number" && Number.isInteger(keep) && keep >= 0)) throw bad("keep", keep, "use an integer ≥ 0");
  if (olderThan !== undefined && !(typeof olderThan === "number" && Number.isFinite(olderThan) && olderThan >= 0)) throw bad("olderThan", olderThan, "use a number of milliseconds ≥ 0");
  if (keep === undefined && olderThan === undefined) throw bad("keep", undefined, "pass keep, olderThan, or both");
  return { keep, olderThan };
}

/** A finished run as retention sees it: its own `updatedAt` (the order) and its age by the store's clock. */
export interface FinishedRun {
  slug: string;
  updatedAt: string;
  /** How long ago the run was last written, by the clock the store trusts (the database's, or `now()`). */
  ageMs: number;
}

/** The finished runs newest first, each with why it goes past the limits (undefined: it is within them). */
export function retentionVerdicts<T extends FinishedRun>(finished: readonly T[], limits: RetentionLimits): Array<{ run: T; reason: GcRemovedReason | undefined }> {
  const sorted = [...finished].sort((a, b) => Date.parse(b.updatedAt) - Date.parse(a.updatedAt) || a.slug.localeCompare(b.slug));
  return sorted.map((run, index) => {
    if (limits.olderThan !== undefined && run.ageMs > limits.olderThan) return { run, reason: "older-than" as const };
    if (limits.keep !== undefined && index >= limits.keep) return { run, reason: "beyond-keep" as const };
    return { run, reason: undefined };
  });
}

/**
 * Whether retention keeps a finished run for a rerun: one of its steps' latest records is superseded by a rerun
 * mark (`phasekit rerun --from`, `rerunFrom`) that is not spent, so the run waits to be resumed and run that step
 * again. A mark the run ended after without reaching its step is spent (rerun-spent.ts): nothing waits for it. The
 * rule of every store's gc (and so of `phasekit rm`); `steps` are the run's latest step records as its store reads them.
 */
export function awaitsRerun(steps: Iterable<{ superseded?: boolean | undefined; rerunSpent?: boolean | undefined }>): boolean {
  for (const s of steps) if (awaitsItsRerun(s)) return true;
  return false;
}
