/** The shapes the CLI's views of runs share (run-view.ts reads them; commands and the inspector print them). */
import type { WorkflowStatus } from "@phasekit/core";
import type { ControlRequest } from "../store/control-signals.js";
import type { WorkflowMetadata } from "../store/metadata-schema.js";
import type { StoreUrl } from "../store/store-url.js";

/** Where the CLI looks for runs: the plan folder of a repository, or a store named by URL (`--store`). */
export interface Roots {
  repoRoot: string;
  planRoot?: string;
  /** Given, runs are read from and written to this store instead of the plan folder. */
  store?: StoreUrl;
}

/** A run's status as shown: the stored one, or `crashed` for a `running` run whose lock holder is gone. */
export type ShownStatus = WorkflowStatus | "crashed" | "unreadable" | "new";

/** One row of `list` (and the inspector's table). */
export interface RunSummary {
  id: string;
  runDir: string;
  status: ShownStatus;
  ownerTool: string | null;
  phase: string | null;
  currentStep: string | null;
  lastStep: string | null;
  createdAt: string | null;
  updatedAt: string | null;
  ageMs: number | null;
  /** The lock holder in one line, null when the lock is free. */
  lockHolder: string | null;
  lockStale: boolean;
  /** Why the run could not be read (status `unreadable`). */
  error: { code: string; message: string } | null;
}

/** One step of a run as `show` prints it. */
export interface StepView {
  stepId: string;
  /** `in-flight` while its runner holds the lock; `interrupted` when the runner died mid-step. */
  status: "completed" | "failed" | "in-flight" | "interrupted";
  attempt: number;
  startedAt: string;
  finishedAt: string | null;
  durationMs: number | null;
  inputFingerprint: string;
  outputFingerprint: string | null;
  error: string | null;
  /** A rerun mark (`phasekit rerun --from`) supersedes this record: the step runs again when the run next reaches it. */
  superseded: boolean;
  /** With `superseded`: the run ended after the mark without reaching the step, so nothing waits for it (gc may remove the run). */
  rerunSpent: boolean;
}

/** Everything `show` and the inspector need about one run. */
export interface RunDetail {
  summary: RunSummary;
  metadata: WorkflowMetadata | null;
  steps: StepView[];
  /** Why the steps could not be read (a damaged history): the rest of the run is still shown. */
  stepsError: { code: string; message: string } | null;
  pending: ControlRequest | null;
}
