/**
 * The public API of both packages, frozen: a name that disappears or appears here is a decision, made by
 * editing this list in the same commit (and the docs and migration notes with it), never an accident of a
 * refactor. Imported through the package names, exactly as a consumer would.
 */
import * as core from "@phasekit/core";
import * as adapters from "@phasekit/adapters-pi";
import * as storeKit from "@phasekit/adapters-pi/store-kit";
import * as planFolder from "@phasekit/adapters-pi/plan-folder";
import * as pi from "@phasekit/adapters-pi/pi";
import * as testing from "@phasekit/adapters-pi/testing";
import * as otel from "@phasekit/adapters-pi/otel";
import { describe, expect, it } from "vitest";

const CORE = [
  "ApproveGateSchema",
  "BLOCK_REASON_VARS",
  "BUDGET_KEYS",
  "BudgetsSchema",
  "CANCELLED_VARS",
  "COMMAND_NAME_PATTERN",
  "COMPLETION_VARS",
  "DEFAULT_ADVANCE_REMINDER",
  "DEFAULT_BLOCK_REASON",
  "DEFAULT_CANCELLED_MESSAGE",
  "DEFAULT_COMPLETION_MESSAGE",
  "DEFAULT_FAILED_MESSAGE",
  "DEFAULT_LAST_PHASE_REMINDER",
  "DEFAULT_NOT_DONE_REMINDER",
  "DEFAULT_PROGRESS",
  "DEFAULT_ROLE_INSTRUCTION",
  "FAILED_VARS",
  "FIELD_VARS",
  "GatesSchema",
  "INITIAL_MESSAGE_VARS",
  "KEY_PATTERN",
  "LAST_PHASE_NOTE",
  "MAX_NESTING",
  "NOT_DONE_VARS",
  "NO_USAGE",
  "OnExhaustedSchema",
  "PROMPT_VARS",
  "PathSegmentSchema",
  "PhaseDefinitionSchema",
  "PhaseEntrySchema",
  "ProfileSchema",
  "ProgressSchema",
  "STATE_SCHEMA_VERSION",
  "SubworkflowRefSchema",
  "ToolRulesSchema",
  "VerifyGateSchema",
  "WORKFLOW_STEP_TOOL",
  "WorkflowDefinitionSchema",
  "WorkflowError",
  "WorkflowStateSchema",
  "WorkflowStatusSchema",
  "advance",
  "cancel",
  "cancelNow",
  "cancelledMessage",
  "carryPosition",
  "checkDefinitions",
  "checkTool",
  "compileDefinitions",
  "completionMessage",
  "contextPrompt",
  "definitionProblemsError",
  "describeSchemaIssue",
  "endOfRunMessage",
  "fail",
  "failedMessage",
  "initialMessage",
  "isBlocking",
  "isCompiledRegistry",
  "isFinished",
  "isLive",
  "isSubworkflowRef",
  "isWorkflowError",
  "judgeBudget",
  "judgeControls",
  "judgeProgress",
  "loop",
  "markCompletionNotified",
  "migrateState",
  "migrations",
  "notDoneReminder",
  "parseState",
  "pause",
  "phaseLabel",
  "reduce",
  "refusalToError",
  "renderTemplate",
  "resolveActive",
  "restartScope",
  "resume",
  "route",
  "start",
  "statusLine",
  "stepResultLine",
  "toPersisted",
  "validateApproval",
  "workflowError",
];

const ADAPTERS = [
  "DEFAULT_TTL_MS",
  "WORKFLOW_FILE",
  "analyzeResumeTarget",
  "composeVerifierPrompt",
  "computeVerificationFingerprint",
  "createDisabledVerificationCache",
  "createFsPlanStore",
  "createPersistentVerificationCache",
  "createReporter",
  "createRunVerificationCache",
  "createShellCommandRunner",
  "createVerificationCache",
  "defaultStageCommands",
  "detectPackageManager",
  "forkRun",
  "loadWorkflowFolders",
  "parseRunState",
  "parseVerifierVerdict",
  "readRunStateFrom",
  "recoverRuns",
  "requestApproval",
  "requestPause",
  "requestStop",
  "rerunFrom",
  "resolveVerificationConfig",
  "runStateToJSON",
  "runVerificationPolicy",
  "runWorkflow",
  "watchRun",
  "writeRunStateTo",
];

/** For storage backends: the rules every store applies, each written once. */
const STORE_KIT = [
  "DeltaError",
  "FINISHED_STATUSES",
  "MAX_CHAIN_LINKS",
  "MAX_OUTPUT_CHAIN",
  "MAX_STEP_ERROR_CHARS",
  "METADATA_EVENT",
  "RERUN_EVENT",
  "RESERVED_STEP_PREFIX",
  "WORKFLOW_METADATA_VERSION",
  "applyDelta",
  "approvalMismatch",
  "assertPlainJson",
  "awaitsRerun",
  "buildDocument",
  "canonicalJson",
  "checkCommitRecord",
  "checkJournalAppend",
  "checkRetentionLimits",
  "checkStepKey",
  "checkpointsOver",
  "closedLeaseError",
  "commitIntentRecord",
  "commitsFrom",
  "controlRefusal",
  "decideStep",
  "fingerprint",
  "finishedError",
  "generateRunId",
  "historyOverEntries",
  "isFingerprint",
  "isReservedStepKey",
  "isSuperseded",
  "journalAfter",
  "keysFrom",
  "newControlRequest",
  "parseControlRequest",
  "parseDelta",
  "refreshClock",
  "refreshOverdue",
  "releasedLeaseError",
  "rerunMarksOf",
  "retentionVerdicts",
  "serializeWorkflowMetadata",
  "slugMismatch",
  "smallDelta",
  "stepErrorText",
  "storableText",
  "validateMetadata",
  "validateSlug",
  "verifiedText",
  "withdrawRefusal",
  "workflowMetadataSchema",
];

/** The fs plan folder's parts, for tools that work on one directly. */
const PLAN_FOLDER = [
  "CONTROL_FILES",
  "JOURNAL_FILE",
  "MESSAGE_MAX_CODE_POINTS",
  "METADATA_FILE",
  "RUN_ID_ALPHABET",
  "RUN_ID_LENGTH",
  "acquirePlanLock",
  "cleanTempFiles",
  "clearControlRequest",
  "controlFile",
  "decideOwnership",
  "describeHolder",
  "ensurePrivateDir",
  "formatMessageText",
  "gc",
  "isInside",
  "isRunId",
  "nodeFs",
  "openRunLog",
  "planRootsOf",
  "readControlRequest",
  "readJournal",
  "readLockHolder",
  "readWorkflowMetadata",
  "rebuildFromJournal",
  "requestPauseIn",
  "requestStopIn",
  "resolveInside",
  "resolvePlanRoot",
  "resolveRunTarget",
  "validateStepId",
  "writeFileAtomic",
  "writeWorkflowMetadata",
];

const PI = [
  "MESSAGE",
  "STATE_ENTRY",
  "STEP_PARAMETERS",
  "STEP_TOOL",
  "SUMMARY_ENTRY",
  "UI_KEY",
  "createCommands",
  "createContinuation",
  "createDurableRuns",
  "createRuntime",
  "createStepTool",
  "createWorkflowExtension",
  "defaultDefinitionRoots",
  "linesComponent",
  "loadDefinitionFolders",
  "phaseListWidget",
  "phasekitWorkflows",
  "piReporter",
  "rebuildState",
  "registerHooks",
  "registerRenderers",
  "runEndOf",
  "summariesOf",
];

const OTEL = ["traceRun"];
const TESTING = ["contentText", "createFakePi", "createMemoryPlanStore", "resultText", "startScriptedModel"];

describe("public API", () => {
  it("@phasekit/adapters-pi/otel exports exactly the documented names", () => {
    expect(Object.keys(otel).sort()).toEqual(OTEL);
  });
  it("@phasekit/adapters-pi/testing exports exactly the documented names", () => {
    expect(Object.keys(testing).sort()).toEqual(TESTING);
  });
  it("@phasekit/adapters-pi/pi exports exactly the documented names", () => {
    expect(Object.keys(pi).sort()).toEqual(PI);
  });
  it("@phasekit/core exports exactly the documented names", () => {
    expect(Object.keys(core).sort()).toEqual(CORE);
  });
  it("@phasekit/adapters-pi exports exactly the documented names", () => {
    expect(Object.keys(adapters).sort()).toEqual(ADAPTERS);
  });
  it("@phasekit/adapters-pi/store-kit exports exactly the documented names", () => {
    expect(Object.keys(storeKit).sort()).toEqual(STORE_KIT);
  });
  it("@phasekit/adapters-pi/plan-folder exports exactly the documented names", () => {
    expect(Object.keys(planFolder).sort()).toEqual(PLAN_FOLDER);
  });
  it("no name is exported from two entry points of @phasekit/adapters-pi", () => {
    const all = [...ADAPTERS, ...STORE_KIT, ...PLAN_FOLDER, ...TESTING, ...OTEL];
    expect(all.length).toBe(new Set(all).size);
  });
  it("every export is defined (no re-export of a missing name)", () => {
    const entries = [core, adapters, storeKit, planFolder, pi, testing, otel].flatMap((m) => Object.entries(m));
    for (const [name, value] of entries) expect(value, name).toBeDefined();
  });
});
