/** @phasekit/adapters-pi: durable plan folders, locks, checkpoints and the runWorkflow lifecycle. */

// The run lifecycle: the one call most extensions need.
export { runWorkflow } from "./run/run-workflow.js";
export type { RunWorkflowOptions, RunResult, RunStatus, ResumePromptInfo, RunCleanupInfo } from "./run/options.js";
export type { RunContext, StepReport } from "./run/context.js";
export type { StepFn, StepOptions, StepResult, StepValue } from "./run/step-options.js";
export type { RunWorkflowHandle } from "./run/workflow-handle.js";
export type { HookName, HookFailure } from "./run/hooks.js";
export { analyzeResumeTarget, decideOwnership } from "./run/resume-analysis.js";
export type { ResumeAnalysis, AnalyzeResumeOptions, OwnershipClaim, OwnershipDecision } from "./run/resume-analysis.js";
export { resolveRunTarget, planRootsOf } from "./run/target.js";
export type { RunLocation, TargetResolution, PlanRootsOptions } from "./run/target.js";
export { requestPause, requestStop } from "./run/control-requests.js";
export type { ControlTargetOptions } from "./run/control-requests.js";
export { requestPauseIn, requestStopIn, readControlRequest, clearControlRequest, controlFile, CONTROL_FILES } from "./store/control-signals.js";
export type { ControlRequest, ControlSignal } from "./store/control-signals.js";
export { newControlRequest, parseControlRequest } from "./store/control-signals.js";
export type { StoreControl, ControlRequestInput } from "./store/control-fs.js";
export { generateRunId, isRunId, RUN_ID_LENGTH, RUN_ID_ALPHABET } from "./run/id.js";
export { runStateToJSON, parseRunState, readRunStateFrom, writeRunStateTo } from "./run/state-io.js";

// The plan folder.
export { createFsPlanStore, METADATA_FILE } from "./store/plan-store.js";
export type { PlanStore, StoreLock, StoreLockOptions, StoreGcOptions, PlanRunEntry, FsPlanStoreOptions } from "./store/plan-store.js";
export { gc } from "./store/retention.js";
export type { GcOptions, GcReport, GcEntry, GcRemovedReason, GcKeptReason } from "./store/retention.js";
export { resolvePlanRoot, validateSlug, validateStepId, resolveInside, isInside, ensurePrivateDir } from "./io/plan-paths.js";
export type { PlanRootOptions } from "./io/plan-paths.js";
export { writeFileAtomic, cleanTempFiles } from "./io/atomic-write.js";
export type { AtomicWriteOptions, AtomicWriteStep } from "./io/atomic-write.js";
export { nodeFs } from "./io/fs-port.js";
export type { FsPort, FsFileHandle } from "./io/fs-port.js";
export { acquirePlanLock } from "./lock/plan-lock.js";
export type { AcquirePlanLockOptions, PlanLock, ReleasePlanLockOutcome } from "./lock/plan-lock.js";
export { readLockHolder, describeHolder } from "./lock/holder.js";
export type { LockOwner, LockHolder, LockInspection } from "./lock/holder.js";
export { readWorkflowMetadata, writeWorkflowMetadata, serializeWorkflowMetadata, buildDocument, validateMetadata } from "./store/metadata.js";
export type { ReadMetadataResult, WriteMetadataOptions } from "./store/metadata.js";
export { workflowMetadataSchema, WORKFLOW_METADATA_VERSION } from "./store/metadata-schema.js";
export type { WorkflowMetadata, WorkflowMetadataInput } from "./store/metadata-schema.js";
export { readJournal, openJournal, rebuildFromJournal, JOURNAL_FILE } from "./store/journal.js";
export type { JournalEntry, JournalAppend, JournalReadResult, JournalWriter } from "./store/journal.js";
export { createCheckpointStore } from "./store/checkpoints.js";
export type { CheckpointStore, CheckpointStoreOptions, StepOutcome, RerunReason, CommitIntent, CompactionReport } from "./store/checkpoints.js";
export type { StepRecord, CommitRecord } from "./store/checkpoint-log.js";
export { openRunLog } from "./store/run-log/run-log.js";
export type { RunLog, OpenRunLogOptions, RunLogStepOutcome, RunLogRerunReason } from "./store/run-log/run-log.js";
export type { StepEntry as RunLogStepEntry } from "./store/run-log/run-index.js";
export type { CompactionReport as RunLogCompactionReport } from "./store/run-log/compaction.js";
// The rules every checkpoint store (the fs run log, @phasekit/store-postgres) applies, each written once.
export { decideStep } from "./store/reuse-decision.js";
export type { StepDecision, PriorStep } from "./store/reuse-decision.js";
export { checkStepKey, commitIntentRecord } from "./store/checkpoints.js";
export { checkCommitRecord } from "./store/commit-record.js";
export { stepErrorText, MAX_STEP_ERROR_CHARS } from "./store/step-error.js";
export { fingerprint, isFingerprint } from "./store/fingerprint.js";
export type { Fingerprint } from "./store/fingerprint.js";
export { assertPlainJson } from "./io/plain-json.js";
export { canonicalJson } from "./io/canonical-json.js";
export type { JsonValue } from "./io/plain-json.js";

// Reporting and verification.
export { createReporter, DEFAULT_TTL_MS } from "./run/reporter.js";
export type { Reporter, ReporterOptions, ReporterMessage, ReporterLevel, ReporterClock, ReporterStream, ReportOptions } from "./run/reporter.js";
export { formatMessageText, MESSAGE_MAX_CODE_POINTS } from "./run/message-text.js";
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
