/**
 * @phasekit/adapters-pi: run multi-step agent work durably. The root is what a library user needs: `runWorkflow`,
 * the store factory and the port's types, pause/stop requests, the reporter, definition folders and
 * verification. Backend authors import `@phasekit/adapters-pi/store-kit`; the plan folder's parts (locks, atomic
 * writes, the run log, paths) are `@phasekit/adapters-pi/plan-folder`; the pi extension is `/pi`.
 */

// The run lifecycle: the one call most extensions need.
export { runWorkflow } from "./run/run-workflow.js";
export type { RunWorkflowOptions, RunResult, RunStatus, ResumePromptInfo, RunCleanupInfo } from "./run/options.js";
export type { DefinitionsChange, OnDefinitionsChanged } from "./run/definitions-change.js";
export type { DefinitionsChoice } from "./run/definitions-review.js";
// Recovery at start: resume the runs a dead process left running.
export { recoverRuns } from "./run/recover-runs.js";
export type { RecoverRunsOptions, RecoveredRun } from "./run/recover-runs.js";
// Watching a run from code: its history as typed events, as they happen.
export { watchRun } from "./cli/watch-run.js";
export type { WatchRunOptions, RunEvent, RunJournalEvent } from "./cli/watch-run.js";
export type { RunContext, StepReport } from "./run/context.js";
export type { BudgetsInput } from "./run/options.js";
export type { RunBudget, BudgetSpend } from "./run/budget.js";
export type { ApprovalOutcome, WaitForApprovalOptions } from "./run/waits.js";
export type { ApprovalDecision } from "./store/control-signals.js";
export type { StepFn, StepBody, StepOutput, StepOptions, StepResult, StepValue } from "./run/step-options.js";
export type { RunWorkflowHandle } from "./run/workflow-handle.js";
export type { HookName, HookFailure } from "./run/hooks.js";
export { analyzeResumeTarget } from "./run/resume-analysis.js";
export type { ResumeAnalysis, AnalyzeResumeOptions } from "./run/resume-analysis.js";
export { runStateToJSON, parseRunState, readRunStateFrom, writeRunStateTo } from "./run/state-io.js";

// Steering a run from another process (or machine).
export { requestPause, requestStop, requestApproval } from "./run/control-requests.js";
export type { ControlTargetOptions } from "./run/control-requests.js";
export { rerunFrom } from "./run/rerun-from.js";
export type { RerunFromOptions, RerunFromResult } from "./run/rerun-from.js";
export { forkRun } from "./run/fork-run.js";
export type { ForkRunOptions, ForkRunResult } from "./run/fork-run.js";
export type { ControlRequest, ControlSignal } from "./store/control-signals.js";
export type { StoreControl, ControlRequestInput } from "./store/control-fs.js";

// Where runs live: the fs store, and the port every store implements.
export { createFsPlanStore } from "./store/plan-store.js";
export type { PlanStore, StoreLock, StoreLockOptions, StoreGcOptions, PlanRunEntry, FsPlanStoreOptions, StoreLeaseView, StoreRunFacts } from "./store/plan-store.js";
export type { CheckpointStore, StepOutcome, RerunReason, CommitIntent, CompactionReport, KnownInput } from "./engine/checkpoint-port.js";
export type { StepRecord, CommitRecord } from "./engine/records.js";
export type { WorkflowMetadata, WorkflowMetadataInput } from "./store/metadata-schema.js";
export type { ReadMetadataResult } from "./store/metadata.js";
export type { JournalEntry, JournalAppend, JournalReadOptions, JournalReadResult } from "./store/journal.js";
export type { GcOptions } from "./store/retention.js";
export type { GcReport, GcEntry, GcRemovedReason, GcKeptReason } from "./engine/retention-policy.js";
export type { LockOwner } from "./lock/holder.js";
export type { ReleasePlanLockOutcome } from "./lock/plan-lock.js";
export type { JsonValue } from "./io/plain-json.js";

// Definition folders (workflow.yaml + one markdown file per phase, pi-workflows' format).
export { loadDefinitionFolders as loadWorkflowFolders, WORKFLOW_FILE } from "./definitions/folders.js";
export type { LoadedDefinitionFolders, DefinitionFileProblem } from "./definitions/folders.js";

// Reporting and verification.
export { createReporter, DEFAULT_TTL_MS } from "./run/reporter.js";
export type { Reporter, ReporterOptions, ReporterMessage, ReporterLevel, ReporterClock, ReporterStream, ReportOptions } from "./run/reporter.js";
export { resolveVerificationConfig, detectPackageManager, defaultStageCommands } from "./verification/config.js";
export type {
  VerificationPolicy,
  VerificationSettings,
  VerificationConfig,
  VerificationCommand,
  VerificationTiming,
  VerificationMode,
  VerificationStageName,
  VerificationCacheMode,
  PackageManager,
} from "./verification/config.js";
export { computeVerificationFingerprint } from "./verification/fingerprint.js";
export type { VerificationFingerprint, VerificationIdentity } from "./verification/fingerprint.js";
export {
  createVerificationCache,
  createRunVerificationCache,
  createPersistentVerificationCache,
  createDisabledVerificationCache,
} from "./verification/cache.js";
export type { VerificationCache, VerificationCacheEntry } from "./verification/cache.js";
export { runVerificationPolicy } from "./verification/policy.js";
export type { VerificationOutcome, VerificationCommandResult } from "./verification/policy.js";
export { createShellCommandRunner } from "./verification/runner.js";
export type { CommandRunner, CommandRunResult } from "./verification/runner.js";
export { composeVerifierPrompt, parseVerifierVerdict } from "./verification/verifier-prompt.js";
