/**
 * A run's state as a pipe-able JSON document (seed 004): `phasekit state show <id> | next-step` hands the next
 * command everything it needs, and `readRunStateFrom(stdin)` reads it back with the same validation as
 * workflow.json, so a damaged or foreign document is a typed error rather than a guess.
 */
import { workflowError, type Result } from "@phasekit/core";
import { validateMetadata } from "../store/metadata.js";
import { serializeWorkflowMetadata } from "../store/metadata.js";
import type { WorkflowMetadata } from "../store/metadata-schema.js";
import { parseJsonText } from "../store/metadata-parse.js";

/** The canonical JSON text of a run's metadata (sorted keys, 2-space indent, trailing newline). */
export function runStateToJSON(metadata: WorkflowMetadata): string {
  return serializeWorkflowMetadata(metadata);
}

/** Parses a run's state from text produced by `runStateToJSON` (or a workflow.json). */
export function parseRunState(text: string, source = "<stdin>"): Result<{ metadata: WorkflowMetadata }> {
  const parsed = parseJsonText(source, text, "state-io");
  if (!parsed.ok) return parsed;
  return validateMetadata(source, parsed.value);
}

/** Reads a whole stream (stdin by default) and parses it as a run's state. */
export async function readRunStateFrom(stream: AsyncIterable<Uint8Array | string> = process.stdin, source = "<stdin>"): Promise<Result<{ metadata: WorkflowMetadata }>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const b = typeof chunk === "string" ? Buffer.from(chunk, "utf8") : Buffer.from(chunk);
    size += b.length;
    if (size > MAX_STATE_BYTES) {
      return { ok: false, error: workflowError("state-io", "INVALID_OPTIONS", `${source} holds more than ${MAX_STATE_BYTES} bytes; a run state is far smaller.`, { file: source, hint: "pipe the output of `phasekit state show <id>`" }) };
    }
    chunks.push(b);
  }
  return parseRunState(Buffer.concat(chunks).toString("utf8"), source);
}

/** Writes a run's state to a stream (stdout by default), ready for the next command of a pipe. */
export function writeRunStateTo(metadata: WorkflowMetadata, stream: { write(chunk: string): unknown } = process.stdout): void {
  stream.write(runStateToJSON(metadata));
}

const MAX_STATE_BYTES = 16 * 1024 * 1024;
