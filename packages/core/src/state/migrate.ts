/**
 * Reads a persisted workflow state of any known version and lifts it to the current one through the ordered
 * `migrations` list. Total: never throws, refuses newer or malformed documents with a typed error naming the
 * field and why, and never writes to the input (so `__proto__`/`constructor` keys cannot reach a prototype).
 */
import { refusal, type Outcome, type Refusal } from "../errors/refusal.js";
import { describeValue, findProtoKeys, formatPath } from "../errors/problems.js";
import { schemaIssue, type SchemaFailure } from "../errors/schema-issue.js";
import { migrations } from "./migrations.js";
import { brokenInvariant } from "./invariants.js";
import { MAX_NESTING } from "../definitions/registry.js";
import { STATE_SCHEMA_VERSION, WorkflowStateSchema } from "./schema.js";
import type { WorkflowState } from "./schema.js";

const SCOPE = "state";

/** The outcome of `migrateState`: the current-version state and the version it was read from, or an error. */
export type MigrateResult = Outcome<{ state: WorkflowState; fromVersion: number; notes: readonly string[] }, MigrateCode>;
/** The refusal codes of `migrateState` and `parseState`. */
export type MigrateCode = "INVALID_STATE" | "UNSUPPORTED_VERSION";
/** parseState's outcome: migrateState's, or INVALID_OPTIONS when its argument is not text. */
export type ParseResult = Outcome<{ state: WorkflowState; fromVersion: number; notes: readonly string[] }, MigrateCode | "INVALID_OPTIONS">;
type WorkflowError = Refusal<MigrateCode>;

function invalid(field: string, reason: string, value: unknown, hint: string): WorkflowError {
  return refusal(SCOPE, "INVALID_STATE", `${field}: ${reason}`, { field, value, hint });
}

function fromIssue(failure: SchemaFailure, root: unknown, version: number): WorkflowError {
  const { field, reason, value } = schemaIssue(failure, root);
  return invalid(field, reason, value, `repair or remove the stored state (read as version ${version})`);
}

/**
 * Which version a raw document claims: `schemaVersion` when present, else `currentPath` (pi-workflows 1.0.0),
 * else `currentPhaseIndex` (earlier pi-workflows).
 */
export function detectStateVersion(raw: Readonly<Record<string, unknown>>): Outcome<{ version: number }, MigrateCode> {
  if (Object.hasOwn(raw, "schemaVersion")) {
    const v = raw["schemaVersion"];
    if (typeof v !== "number" || !Number.isSafeInteger(v) || v < 0) {
      return { ok: false, error: invalid("schemaVersion", `expected a non-negative integer, got ${describeValue(v)}`, v, "write a known version number") };
    }
    return { ok: true, version: v };
  }
  if (Object.hasOwn(raw, "currentPath")) return { ok: true, version: 1 };
  if (Object.hasOwn(raw, "currentPhaseIndex")) return { ok: true, version: 0 };
  return {
    ok: false,
    error: invalid("schemaVersion", "is missing, and neither currentPath nor currentPhaseIndex tells an older version", undefined, "this is not a workflow state"),
  };
}

function migrateObject(raw: Readonly<Record<string, unknown>>): MigrateResult {
  const detected = detectStateVersion(raw);
  if (!detected.ok) return detected;
  const fromVersion = detected.version;
  if (fromVersion > STATE_SCHEMA_VERSION) {
    return {
      ok: false,
      error: refusal(
        SCOPE,
        "UNSUPPORTED_VERSION",
        `schemaVersion ${fromVersion} is newer than the newest this release knows (${STATE_SCHEMA_VERSION})`,
        { field: "schemaVersion", value: fromVersion, hint: "upgrade phasekit to read this state" },
      ),
    };
  }
  // Bounds before any full read: a path longer than the nesting limit is refused without parsing a million segments.
  const path = Object.hasOwn(raw, "currentPath") ? raw["currentPath"] : undefined;
  if (Array.isArray(path) && path.length > MAX_NESTING) {
    return { ok: false, error: invalid("currentPath", `has ${path.length} segments; at most ${MAX_NESTING} (the nesting limit)`, undefined, "repair or remove the stored state") };
  }
  const proto = findProtoKeys(raw)[0];
  if (proto !== undefined) {
    return { ok: false, error: invalid(formatPath(proto), "the key \"__proto__\" is not allowed", undefined, "remove the key") };
  }
  let current: unknown = raw;
  for (let version = fromVersion; version < STATE_SCHEMA_VERSION; version += 1) {
    const step = migrations[version];
    if (step === undefined) break;
    const parsed = step.schema.safeParse(current);
    if (!parsed.success) return { ok: false, error: fromIssue(parsed.error, current, version) };
    current = step.up(parsed.data as never);
  }
  const parsed = WorkflowStateSchema.safeParse(current);
  if (!parsed.success) return { ok: false, error: fromIssue(parsed.error, current, STATE_SCHEMA_VERSION) };
  const broken = brokenInvariant(parsed.data);
  if (broken !== undefined) return { ok: false, error: invalid(broken.field, broken.reason, broken.value, broken.hint) };
  // A cancel is confirmed in the session that armed it, never by a reload: every parse disarms.
  const rawId = raw["taskId"];
  const notes = fromVersion < 2 && (typeof rawId !== "string" || rawId === "") ? [`taskId was ${rawId === "" ? "empty" : "missing"}; derived "${parsed.data.taskId}" from the workflow, start time and task`] : [];
  return { ok: true, state: { ...parsed.data, cancelPending: false }, fromVersion, notes };
}

/** Reads any known persisted state shape into the current version, or says which field is wrong and why. */
export function migrateState(raw: unknown): MigrateResult {
  try {
    // Array.isArray throws on a revoked Proxy: inside the try, so every input is judged as a state.
    if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
      return { ok: false, error: invalid("(root)", `expected an object, got ${describeValue(raw)}`, undefined, "pass the stored state object") };
    }
    return migrateObject(raw as Readonly<Record<string, unknown>>);
  } catch {
    // Only exotic inputs (proxies, throwing getters) get here; a typed refusal is still the contract.
    return { ok: false, error: refusal(SCOPE, "INVALID_STATE", "(root): could not be read as plain JSON", { field: "(root)", hint: "pass plain JSON data" }) };
  }
}

/** Parses JSON text and migrates it: the usual entry point for a state read from a file or a session entry. */
export function parseState(json: string): ParseResult {
  if (typeof json !== "string") {
    return { ok: false, error: refusal(SCOPE, "INVALID_OPTIONS", `json must be JSON text (a string), got ${describeValue(json)}.`, { field: "json", hint: "Pass the text read from the file; an object already parsed goes to migrateState." }) };
  }
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch (cause) {
    const reason = cause instanceof Error ? cause.message : "unreadable";
    return { ok: false, error: refusal(SCOPE, "INVALID_STATE", `(root): not valid JSON (${reason})`, { field: "(root)", hint: "restore the file from a backup or remove it" }) };
  }
  return migrateState(raw);
}
