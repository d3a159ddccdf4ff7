/**
 * @phasekit/adapters-pi/store-kit: what a new storage backend needs beyond the port's types (which the package
 * root exports). Every rule here is written once and applied by the fs store and @phasekit/store-postgres alike:
 * the reuse decision, step keys, commit and error records, fingerprints, the metadata document and control
 * requests. A backend implements the history port and passes the contract suites; it re-decides none of these:
 * `checkpointsOver(port)` is its CheckpointStore (the step flow, commit intents and rerun marks of the engine).
 */
export { checkpointsOver } from "./engine/checkpoints.js";
// The holder-side freshness of a lease or lock heartbeat (both clocks): the PostgreSQL lease judges itself by it.
export { refreshClock, refreshOverdue } from "./lock/heartbeat.js";
export { closedLeaseError, releasedLeaseError } from "./lock/errors.js";
export type { RefreshStamp } from "./lock/heartbeat.js";
export type { HistoryPort, MarkRequest, SpendRequest } from "./engine/history-port.js";
export type { StepPort, StepStart, StoredOutput, FreshOutput } from "./engine/step-port.js";
export { historyOverEntries } from "./engine/entry-history.js";
export type { EntryHistoryOptions } from "./engine/entry-history.js";
export type { EntryPort, HistoryEntry, StoredEntry } from "./engine/entry-port.js";
export { decideStep, isSuperseded, keysFrom, rerunMarksOf, RERUN_EVENT } from "./engine/reuse-decision.js";
export type { StepDecision, PriorStep, RerunMark, StoredRerunEvent } from "./engine/reuse-decision.js";
export { checkStepKey, commitIntentRecord } from "./engine/checkpoint-port.js";
export { checkCommitRecord, commitsFrom } from "./engine/commit-record.js";
export type { RecordPlace, StoredCommit } from "./engine/commit-record.js";
export { stepErrorText, storableText, MAX_STEP_ERROR_CHARS } from "./engine/step-error.js";
export { generateRunId } from "./run/id.js";
export type { RandomBytes } from "./run/id.js";
export { fingerprint, isFingerprint } from "./engine/fingerprint.js";
export type { Fingerprint } from "./engine/fingerprint.js";
export { assertPlainJson } from "./io/plain-json.js";
export { canonicalJson } from "./io/canonical-json.js";
export { serializeWorkflowMetadata, buildDocument, validateMetadata, slugMismatch } from "./store/metadata.js";
export { checkJournalAppend, journalAfter, METADATA_EVENT } from "./store/journal.js";
export { workflowMetadataSchema, WORKFLOW_METADATA_VERSION } from "./store/metadata-schema.js";
export { approvalMismatch, newControlRequest, parseControlRequest, withdrawRefusal } from "./store/control-signals.js";
export { controlRefusal } from "./store/control-fs.js";
export { isReservedStepKey, RESERVED_STEP_PREFIX } from "./engine/reserved-keys.js";
export { validateSlug } from "./io/plan-paths.js";
export { FINISHED_STATUSES, finishedError } from "./store/run-status.js";
export { awaitsRerun, checkRetentionLimits, retentionVerdicts } from "./engine/retention-policy.js";
export type { FinishedRun, RetentionLimits } from "./engine/retention-policy.js";
// The output-delta codec (docs/decisions.md D16): the fs run log and the PostgreSQL artifacts store step outputs
// as deltas with the same rule (a delta only when under half the value), operations and chain length.
export { smallDelta, applyDelta, parseDelta, DeltaError } from "./store/run-log/state-delta.js";
export type { DeltaOp } from "./store/run-log/state-delta.js";
export { MAX_CHAIN_LINKS, MAX_OUTPUT_CHAIN, verifiedText } from "./store/run-log/output-delta.js";
