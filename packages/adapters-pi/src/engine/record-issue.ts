/** Where a record's first schema issue points, for an error naming the field and the value (every record check shares it). */
import type { z } from "zod";

/**
 * The first issue of `error` (from parsing `record`): its field as a dotted path ("" for the record itself), the
 * value there shortened for an error's details (a string cut to 80 characters, an object or array by its kind),
 * and zod's message (undefined when there is no issue).
 */
export function firstIssue(record: unknown, error: z.ZodError): { field: string; value: unknown; message: string | undefined } {
  const issue = error.issues[0];
  const where = issue?.path ?? [];
  let value: unknown = record;
  for (const key of where) value = (value as Record<PropertyKey, unknown> | null | undefined)?.[key];
  return {
    field: where.map(String).join("."),
    value: typeof value === "string" ? value.slice(0, 80) : typeof value === "object" && value !== null ? (Array.isArray(value) ? "array" : "object") : value,
    message: issue?.message,
  };
}
