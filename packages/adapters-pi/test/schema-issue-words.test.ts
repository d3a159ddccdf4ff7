/**
 * Every adapter check that turns a failed schema parse into an error quotes core's `describeSchemaIssue`: the
 * field as `a.b[2].c` (`(root)` for the document itself), the reason with what was found, an unknown key named
 * itself. One row per check; each keeps its own code, file and field.
 */
import { describe, expect, it } from "vitest";
import { isWorkflowError, type WorkflowError } from "@phasekit/core";
import { createRunBudget, parseBudgets, recordBudgetTotal } from "../src/run/budget.js";
import { decodeOutcome } from "../src/run/dispatch-record.js";
import { parseResumeArgs } from "../src/pi/budget-args.js";
import { parseControlRequest } from "../src/store/control-signals.js";
import { foldLog } from "../src/store/checkpoint-log.js";
import { checkJournalAppend, parseJournal } from "../src/store/journal.js";
import { validateMetadata } from "../src/store/metadata.js";
import { checkCommitRecord, commitsFrom } from "../src/engine/commit-record.js";
import type { CheckpointStore } from "../src/engine/checkpoint-port.js";

const at = "2026-01-02T03:04:05.000Z";

function thrown(fn: () => unknown): WorkflowError {
  try {
    fn();
  } catch (error) {
    if (isWorkflowError(error)) return error as WorkflowError;
    throw error;
  }
  throw new Error("expected a WorkflowError");
}

function refused(r: { ok: boolean; error?: WorkflowError }): WorkflowError {
  if (r.ok || r.error === undefined) throw new Error("expected a refusal");
  return r.error;
}

describe("schema failures in adapter errors", () => {
  it.each<[string, () => WorkflowError | Promise<WorkflowError>, { code: string; text: string; field?: string; file?: string }]>([
    ["runWorkflow budgets", () => thrown(() => parseBudgets({ turns: -1 })), { code: "INVALID_OPTIONS", text: "budgets.turns: expected a non-negative number, got -1.", field: "budgets.turns" }],
    ["runWorkflow budgets, an unknown key", () => thrown(() => parseBudgets({ turn: 3 })), { code: "INVALID_OPTIONS", text: 'budgets.turn: unknown field "turn".', field: "budgets.turn" }],
    [
      "budget.spend",
      async () => {
        const budget = createRunBudget({ onExhausted: "pause" }, {} as CheckpointStore, () => 0, 0, "run r");
        return budget.spend({ tokens: "many" as never }).then(() => { throw new Error("spend took a bad value"); }, (e: WorkflowError) => e);
      },
      { code: "INVALID_OPTIONS", text: 'spend.tokens: expected a number, got "many".', field: "spend" },
    ],
    [
      "a budget total recorded from pi's counts (was zod's own throw)",
      () => recordBudgetTotal({} as CheckpointStore, 1, { turns: Number.NaN }, { turns: 1, toolCalls: 0, tokens: 0, cost: 0 }).then(() => { throw new Error("recorded a NaN"); }, (e: WorkflowError) => e),
      { code: "INVALID_OPTIONS", text: "spend.turns: expected a number, got NaN.", field: "spend" },
    ],
    ["a control request", () => refused(parseControlRequest({ schemaVersion: 1, signal: "pause", reason: "r", requestedAt: at, requestedBy: { pid: 1.5, host: "h" } }, "pause", "pause-request.json")), { code: "CORRUPT_FILE", text: "pause-request.json is not a valid control request: requestedBy.pid: expected an integer, got 1.5.", file: "pause-request.json" }],
    ["a checkpoint log line", () => refused(foldLog("checkpoints.ndjson", Buffer.from(`${JSON.stringify({ v: 1, kind: "commit", id: "c1", status: "intended", message: "m", files: ["a", 7], intendedAt: at })}\n`))), { code: "CORRUPT_FILE", text: "files[1]: expected a string, got 7", file: "checkpoints.ndjson" }],
    ["a journal line", () => refused(parseJournal("journal.ndjson", `${JSON.stringify({ seq: 1, generation: 1, at, event: "" })}\n`)), { code: "CORRUPT_FILE", text: "journal.ndjson line 1 is damaged: event: expected at least 1 character(s)", file: "journal.ndjson" }],
    ["a journal append", () => refused(checkJournalAppend("run-k", { generation: 1, at, event: "e", extra: true })), { code: "INVALID_OPTIONS", text: 'run run-k: the journal entry is invalid: extra: unknown field "extra".', field: "extra" }],
    ["workflow.json", () => refused(validateMetadata("workflow.json", { schemaVersion: 1 })), { code: "CORRUPT_FILE", text: "workflow.json is corrupt: slug: is missing (expected a string).", field: "slug", file: "workflow.json" }],
    ["workflow.json that is no object", () => refused(validateMetadata("workflow.json", [])), { code: "CORRUPT_FILE", text: "workflow.json is corrupt: (root): the document is not a JSON object", field: "(root)" }],
    ["a commit record to write", () => thrown(() => checkCommitRecord({ v: 1, kind: "commit", id: "c1", status: "intended", message: "m", files: ["a", ""], intendedAt: at }, "log")), { code: "INVALID_OPTIONS", text: 'commit record "c1" in log is invalid: files[1]: ', field: "files[1]" }],
    ["a stored commit record", () => thrown(() => commitsFrom([{ data: { v: 1, kind: "commit", id: "c1", status: "intended", message: 5, files: [], intendedAt: at }, file: "seg", place: { offset: 9 } }])), { code: "CORRUPT_FILE", text: "at byte 9 that is not valid: message: expected a string, got 5.", field: "message" }],
    ["a recorded transition", () => thrown(() => decodeOutcome("phasekit:workflow#1", "log", { ok: false, error: { name: "WorkflowError", code: 3, message: "m", details: {} } })), { code: "CORRUPT_FILE", text: "is not a recorded workflow transition: error.code: expected a string, got 3.", field: "phasekit:workflow#1" }],
  ])("%s", async (_name, make, want) => {
    const error = await make();
    expect(error.code).toBe(want.code);
    expect(error.message).toContain(want.text);
    if (want.field !== undefined) expect(error.details.field).toBe(want.field);
    if (want.file !== undefined) expect(error.details.file).toBe(want.file);
  });

  it("/workflow-resume budgets give the reason in core's words", () => {
    const r = parseResumeArgs("run-1 turns=-1");
    expect(r).toMatchObject({ ok: false, message: expect.stringContaining('budget turns="-1" is not valid (expected a non-negative number, got -1)') });
  });
});
