/**
 * @phasekit/adapters-pi/plan-folder: the parts of the fs plan folder, for tools that work on one directly
 * (`createFsPlanStore` from the package root is the usual way in): paths and ids, atomic writes, the plan lock,
 * workflow.json, the journal, the run log, request files, targets and retention.
 */
export { resolvePlanRoot, validateStepId, resolveInside, isInside, ensurePrivateDir } from "./io/plan-paths.js";
export type { PlanRootOptions } from "./io/plan-paths.js";
export { writeFileAtomic, cleanTempFiles } from "./io/atomic-write.js";
export type { AtomicWriteOptions, AtomicWriteStep } from "./io/atomic-write.js";
export { nodeFs } from "./io/fs-port.js";
export type { FsPort, FsFileHandle } from "./io/fs-port.js";
export { acquirePlanLock } from "./lock/plan-lock.js";
export type { AcquirePlanLockOptions, PlanLock } from "./lock/plan-lock.js";
export { readLockHolder, describeHolder } from "./lock/holder.js";
export type { LockHolder, LockInspection } from "./lock/holder.js";
export { METADATA_FILE } from "./store/plan-store.js";
export { readWorkflowMetadata, writeWorkflowMetadata } from "./store/metadata.js";
export type { WriteMetadataOptions } from "./store/metadata.js";
export { readJournal, rebuildFromJournal, JOURNAL_FILE } from "./store/journal.js";
export { openRunLog } from "./store/run-log/run-log.js";
export type { RunLog, OpenRunLogOptions, RunLogStepOutcome } from "./store/run-log/run-log.js";
export type { StepEntry as RunLogStepEntry } from "./store/run-log/run-index.js";
export type { CompactionReport as RunLogCompactionReport } from "./store/run-log/compaction.js";
export { requestPauseIn, requestStopIn, readControlRequest, clearControlRequest, controlFile, CONTROL_FILES } from "./store/control-signals.js";
export { gc } from "./store/retention.js";
export { resolveRunTarget, planRootsOf } from "./run/target.js";
export type { RunLocation, TargetResolution, PlanRootsOptions } from "./run/target.js";
export { decideOwnership } from "./run/resume-analysis.js";
export type { OwnershipClaim, OwnershipDecision } from "./run/resume-analysis.js";
export { isRunId, RUN_ID_LENGTH, RUN_ID_ALPHABET } from "./run/id.js";
export { formatMessageText, MESSAGE_MAX_CODE_POINTS } from "./run/message-text.js";
