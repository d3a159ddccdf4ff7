/**
 * The untrusted-bytes edge: turns a file's bytes into JSON or a CORRUPT_FILE error that names the file and the
 * byte offset. Prototype-named keys are refused here because zod 4 drops `__proto__` keys silently (the value would vanish without an error).
 */
import { workflowError, type Result, type WorkflowError } from "@phasekit/core";

/** Keys that could reach an object's prototype when a parsed document is spread or merged. */
export const FORBIDDEN_KEYS: ReadonlySet<string> = new Set(["__proto__", "constructor", "prototype"]);

const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** Parses `bytes` (read from `file`) as strict JSON: UTF-8, no BOM, not empty, no prototype keys. */
export function parseJsonBytes(file: string, bytes: Uint8Array, scope: string): Result<{ value: unknown }> {
  if (bytes.length === 0) return corrupt(scope, file, "the file is empty", 0);
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) {
    return corrupt(scope, file, "the file starts with a UTF-8 byte-order mark", 0);
  }
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch {
    return corrupt(scope, file, "the file is not valid UTF-8", firstInvalidUtf8(bytes));
  }
  return parseJsonText(file, text, scope);
}

/** Parses `text` (from `file`) as strict JSON; a syntax error reports its byte offset. */
export function parseJsonText(file: string, text: string, scope: string): Result<{ value: unknown }> {
  let badKey: string | undefined;
  let value: unknown;
  try {
    value = JSON.parse(text, function (this: unknown, key: string, v: unknown) {
      if (FORBIDDEN_KEYS.has(key) && badKey === undefined && !Array.isArray(this)) badKey = key;
      return v;
    });
  } catch (error) {
    if (error instanceof RangeError) return corrupt(scope, file, "the JSON is nested too deeply", undefined);
    const offset = syntaxOffset(text, error);
    return corrupt(scope, file, `invalid JSON: ${(error as Error).message}`, offset);
  }
  if (badKey !== undefined) {
    return { ok: false, error: refusal(scope, file, `the document holds a key named "${badKey}", which is refused`, undefined, badKey) };
  }
  return { ok: true, value };
}

/** The first forbidden key found anywhere in `value` (so a write can never produce a file its read refuses). */
export function findForbiddenKey(value: unknown, depth = 0): string | undefined {
  if (typeof value !== "object" || value === null || depth > 1000) return undefined;
  if (Array.isArray(value)) {
    for (const item of value) {
      const k = findForbiddenKey(item, depth + 1);
      if (k !== undefined) return k;
    }
    return undefined;
  }
  for (const key of Object.keys(value)) {
    if (FORBIDDEN_KEYS.has(key)) return key;
    const k = findForbiddenKey((value as Record<string, unknown>)[key], depth + 1);
    if (k !== undefined) return k;
  }
  return undefined;
}

function syntaxOffset(text: string, error: unknown): number {
  const message = error instanceof Error ? error.message : "";
  const m = /at position (\d+)/.exec(message);
  // V8 omits the position for a truncated document: the error is at the end.
  const chars = m ? Number(m[1]) : text.length;
  return Buffer.byteLength(text.slice(0, chars), "utf8");
}

function firstInvalidUtf8(bytes: Uint8Array): number {
  // Everything before the first replacement character decoded cleanly, so its UTF-8 length is the offset.
  const lossy = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString("utf8");
  const at = lossy.indexOf("\uFFFD");
  return Buffer.byteLength(lossy.slice(0, at < 0 ? 0 : at), "utf8");
}

function corrupt(scope: string, file: string, why: string, offset: number | undefined): { ok: false; error: WorkflowError } {
  return { ok: false, error: refusal(scope, file, why, offset, undefined) };
}

function refusal(scope: string, file: string, why: string, offset: number | undefined, field: string | undefined): WorkflowError {
  const at = offset === undefined ? "" : ` at byte ${offset}`;
  return workflowError(scope, "CORRUPT_FILE", `${file} is corrupt${at}: ${why}. The file was left untouched.`, {
    file,
    ...(offset === undefined ? {} : { offset }),
    ...(field === undefined ? {} : { field }),
    hint: "inspect or restore the file by hand (the journal beside it can rebuild workflow.json); phasekit never overwrites it",
  });
}
