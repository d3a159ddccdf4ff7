/**
 * Reading and compare-and-set writing of workflow.json. A corrupt file is reported, never repaired: no read or
 * write path overwrites or deletes it, so a human (or the journal) can recover what it held.
 */
import { isWorkflowError, workflowError, type Result, type WorkflowError } from "@phasekit/core";
import { writeFileAtomic } from "../io/atomic-write.js";
import { nodeFs, type FsPort } from "../io/fs-port.js";
import { canonicalJson } from "../io/canonical-json.js";
import { MAX_FILE_BYTES, readRegular } from "../io/safe-open.js";
import { schemaIssue } from "../engine/record-issue.js";
import { findForbiddenKey, parseJsonBytes } from "./metadata-parse.js";
import {
  WORKFLOW_METADATA_VERSION,
  workflowMetadataSchema,
  type WorkflowMetadata,
  type WorkflowMetadataInput,
} from "./metadata-schema.js";

const SCOPE = "workflow.json";

/** The one check every store makes before writing run `slug`'s metadata: the document names that run (INVALID_STATE otherwise). */
export function slugMismatch(slug: string, next: { slug?: unknown } | null | undefined): WorkflowError | undefined {
  const found = next?.slug;
  if (found === slug) return undefined;
  return workflowError("store", "INVALID_STATE", `metadata for run ${slug} names slug ${JSON.stringify(found)}.`, {
    field: "slug",
    value: typeof found === "string" ? found.slice(0, 80) : typeof found,
    hint: `pass metadata whose slug is ${JSON.stringify(slug)}`,
  });
}

/** Outcome of a read: the metadata, `null` when the file does not exist, or a typed error. */
export type ReadMetadataResult = { ok: true; metadata: WorkflowMetadata | null } | { ok: false; error: WorkflowError };

/** Options of `writeWorkflowMetadata`. */
export interface WriteMetadataOptions {
  /** The generation the caller last read; `null` means the file must not exist yet. */
  expectedGeneration: number | null;
  fs?: FsPort;
}

/** Reads and validates workflow.json; CORRUPT_FILE / UNSUPPORTED_VERSION name the file (and byte offset). */
export async function readWorkflowMetadata(file: string, options: { fs?: FsPort } = {}): Promise<ReadMetadataResult> {
  const fs = options.fs ?? nodeFs;
  let bytes: Buffer | null;
  try {
    bytes = await readRegular(fs, file, { maxBytes: MAX_FILE_BYTES.metadata, scope: SCOPE });
  } catch (error) {
    if (isWorkflowError(error)) return { ok: false, error };
    const e = workflowError(SCOPE, "READ_FAILED", `cannot read ${file}: ${String(error)}`, { file, hint: "check the file's permissions" }, error);
    return { ok: false, error: e };
  }
  if (bytes === null) return { ok: true, metadata: null };
  const parsed = parseWorkflowMetadata(file, bytes);
  return parsed.ok ? { ok: true, metadata: parsed.metadata } : parsed;
}

/** Validates the bytes of a workflow.json (read from `file`, named in errors). */
export function parseWorkflowMetadata(file: string, bytes: Uint8Array): Result<{ metadata: WorkflowMetadata }> {
  const json = parseJsonBytes(file, bytes, SCOPE);
  if (!json.ok) return json;
  return validateMetadata(file, json.value);
}

/** Checks an already-parsed document against the v1 schema; a newer version is UNSUPPORTED_VERSION. */
export function validateMetadata(file: string, value: unknown): Result<{ metadata: WorkflowMetadata }> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return { ok: false, error: shapeError(file, "(root)", "the document is not a JSON object", value) };
  }
  const version = (value as { schemaVersion?: unknown }).schemaVersion;
  if (typeof version === "number" && Number.isInteger(version) && version > WORKFLOW_METADATA_VERSION) {
    const error = workflowError(SCOPE, "UNSUPPORTED_VERSION", `${file} has schemaVersion ${version}; this phasekit reads up to ${WORKFLOW_METADATA_VERSION}.`, {
      file,
      field: "schemaVersion",
      value: version,
      hint: "upgrade phasekit to read this plan folder",
    });
    return { ok: false, error };
  }
  const r = workflowMetadataSchema.safeParse(value);
  if (r.success) return { ok: true, metadata: r.data };
  const issue = schemaIssue(r.error, value);
  return { ok: false, error: shapeError(file, issue.field, issue.reason, undefined) };
}

/** The exact bytes written for `metadata`: canonical key order, 2-space indent, trailing newline. */
export function serializeWorkflowMetadata(metadata: WorkflowMetadata): string {
  return `${canonicalJson(metadata, 2)}\n`;
}

/**
 * Compare-and-set write: refuses with STALE_GENERATION unless the file's generation equals `expectedGeneration`,
 * refuses (CORRUPT_FILE) to replace a corrupt file, then writes generation + 1 atomically and returns it.
 * Two processes must also hold the plan lock: the check catches a holder that lost its lock, not a race.
 */
export async function writeWorkflowMetadata(
  file: string,
  next: WorkflowMetadataInput,
  options: WriteMetadataOptions,
): Promise<Result<{ metadata: WorkflowMetadata }>> {
  const fs = options.fs ?? nodeFs;
  const { expectedGeneration } = options;
  if (expectedGeneration !== null && !(Number.isSafeInteger(expectedGeneration) && expectedGeneration >= 1)) {
    const error = workflowError(SCOPE, "INVALID_OPTIONS", `expectedGeneration ${String(expectedGeneration)} is not a positive integer or null.`, {
      file,
      field: "expectedGeneration",
      value: expectedGeneration,
      hint: "pass the generation you last read, or null to create the file",
    });
    return { ok: false, error };
  }
  const built = buildDocument(file, next, (expectedGeneration ?? 0) + 1);
  if (!built.ok) return built;
  // The check reads the current file while the new one is written and fsynced; it decides before the rename.
  const check = readWorkflowMetadata(file, { fs }).then((current): Result<{}> => {
    if (!current.ok) return current;
    const found = current.metadata?.generation ?? null;
    return found === expectedGeneration ? { ok: true } : { ok: false, error: staleError(file, expectedGeneration, found) };
  });
  try {
    await writeFileAtomic(file, built.text, {
      fs,
      beforeRename: async () => {
        const c = await check;
        if (!c.ok) throw c.error;
      },
    });
  } catch (error) {
    if (isWorkflowError(error)) return { ok: false, error };
    return { ok: false, error: workflowError(SCOPE, "WRITE_FAILED", `writing ${file} failed: ${String(error)}`, { file }, error) };
  } finally {
    await check.catch(() => undefined);
  }
  return { ok: true, metadata: built.metadata };
}

/** Validates and encodes the next document; refuses what a later read would refuse. */
export function buildDocument(file: string, next: WorkflowMetadataInput, generation: number): Result<{ metadata: WorkflowMetadata; text: string }> {
  const doc: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(next as Record<string, unknown>)) if (v !== undefined) doc[k] = v;
  doc.schemaVersion = WORKFLOW_METADATA_VERSION;
  doc.generation = generation;
  const checked = validateMetadata(file, doc);
  if (!checked.ok) return { ok: false, error: inputError(file, checked.error) };
  const badKey = findForbiddenKey(doc);
  if (badKey !== undefined) {
    return { ok: false, error: workflowError(SCOPE, "INVALID_STATE", `refusing to write ${file}: the state holds a key named "${badKey}".`, { file, field: badKey, hint: "rename the key" }) };
  }
  try {
    return { ok: true, metadata: checked.metadata, text: serializeWorkflowMetadata(checked.metadata) };
  } catch (error) {
    if (isWorkflowError(error)) return { ok: false, error };
    throw error;
  }
}

function staleError(file: string, expected: number | null, found: number | null): WorkflowError {
  const what = found === null ? "does not exist" : `is at generation ${found}`;
  return workflowError(SCOPE, "STALE_GENERATION", `refusing to write ${file}: expected generation ${String(expected)}, but the file ${what}.`, {
    file,
    field: "generation",
    value: found,
    expected,
    hint: "another writer changed the run: re-read workflow.json (and re-acquire the lock) before writing",
  });
}

function shapeError(file: string, field: string, why: string, value: unknown): WorkflowError {
  return workflowError(SCOPE, "CORRUPT_FILE", `${file} is corrupt: ${field}: ${why}. The file was left untouched.`, {
    file,
    field,
    ...(value === undefined ? {} : { value: typeof value }),
    hint: "inspect or restore the file by hand (the journal beside it can rebuild workflow.json); phasekit never overwrites it",
  });
}

function inputError(file: string, error: WorkflowError): WorkflowError {
  const field = typeof error.details.field === "string" ? error.details.field : "(root)";
  return workflowError(SCOPE, "INVALID_STATE", `refusing to write ${file}: field ${field} is invalid (${error.message}).`, {
    file,
    field,
    hint: "fix the value passed to writeWorkflowMetadata",
  }, error);
}
