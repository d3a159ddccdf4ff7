/**
 * pi-workflows 1.0.0 reads the fields of `workflow.yaml` and of a phase's front matter by type: an optional field
 * of the wrong type is ignored (`loopable: "yes"` means "not set"), list items become strings, a `tools` value that
 * is no mapping means no tool rules. A folder pi loads must load here with the same meaning, so the fields are read
 * the same way; what pi ignores silently is ignored here too, but with a warning that names the field. A key
 * that is no field at all (a typo such as `loopabel`) is named too, against the shipped JSON Schemas' fields.
 */
import { phaseFrontMatterSchema, workflowFileSchema } from "./json-schemas.js";

/** A field that was not used, and why. */
export interface IgnoredField {
  readonly path: readonly (string | number)[];
  readonly reason: string;
}

type Kind = "string" | "number" | "boolean";

/** pi-workflows' optional workflow fields and their types (src/config/loading-parse.ts, setOptionalFields). */
const PI_WORKFLOW_FIELDS: ReadonlyArray<readonly [string, Kind]> = [
  ["commandName", "string"],
  ["initialMessage", "string"],
  ["loopable", "boolean"],
  ["sessionNamePrefix", "string"],
  ["sessionNameMaxLength", "number"],
  ["roleInstruction", "string"],
  ["advanceReminder", "string"],
  ["blockReasonTemplate", "string"],
  ["completionMessage", "string"],
  ["notDoneReminder", "string"],
];

/** phasekit's own workflow fields (pi-workflows has none of them): passed on as written, core checks them. */
const PHASEKIT_WORKFLOW_FIELDS = ["name", "description", "maxLoops", "cancelledMessage", "profiles", "budgets", "progress"] as const;
/** phasekit's own phase fields (run controls, docs/gates.md): passed on as written, core checks them. */
const PHASEKIT_PHASE_FIELDS = ["budgets", "progress", "gates"] as const;

/** The workflow fields of `y` as core should see them; `ignored` lists what pi-workflows would have ignored. */
export function workflowFields(y: Readonly<Record<string, unknown>>, ignored: IgnoredField[]): Record<string, unknown> {
  const def: Record<string, unknown> = {};
  for (const field of PHASEKIT_WORKFLOW_FIELDS) if (Object.hasOwn(y, field) && y[field] !== null) def[field] = y[field];
  for (const [field, kind] of PI_WORKFLOW_FIELDS) {
    if (!Object.hasOwn(y, field) || y[field] === null) continue;
    const value = y[field];
    // A hidden workflow has no command and no first message: pi keeps whatever is there as "" (never used).
    if (typeof value === kind) def[field] = value;
    else ignored.push({ path: [field], reason: `${field} is ${describe(value)}, not a ${kind}, so it is ignored (as pi-workflows does)` });
  }
  unknownKeys(y, Object.keys(workflowFileSchema.shape), "workflow.yaml", ignored);
  // pi-workflows: show "workflows" = usable only inside other workflows, which is phasekit's show false.
  if (Object.hasOwn(y, "show")) def["show"] = typeof y["show"] === "boolean" ? y["show"] : y["show"] !== "workflows";
  return def;
}

/** A phase from its front matter and body, read as pi-workflows reads it (src/config/loading-parse.ts). */
export function phaseFields(d: Readonly<Record<string, unknown>>, body: string, ignored: IgnoredField[]): Record<string, unknown> {
  const phase: Record<string, unknown> = { id: d["id"], name: d["name"], emoji: d["emoji"] ?? "", instructions: body.trim() };
  unknownKeys(d, Object.keys(phaseFrontMatterSchema.shape), "phase front matter", ignored);
  for (const field of PHASEKIT_PHASE_FIELDS) if (Object.hasOwn(d, field) && d[field] !== null) phase[field] = d[field];
  const tools = d["tools"];
  if (tools !== undefined && tools !== null) {
    if (typeof tools !== "object" || Array.isArray(tools)) {
      ignored.push({ path: ["tools"], reason: `tools is ${describe(tools)}, not a mapping with a whitelist or a blacklist, so the phase has no tool rules (as in pi-workflows)` });
    } else {
      const t = tools as Record<string, unknown>;
      const rules: Record<string, string[]> = {};
      for (const list of ["blacklist", "whitelist"] as const) {
        if (Array.isArray(t[list])) rules[list] = (t[list] as unknown[]).map(String);
        else if (t[list] !== undefined && t[list] !== null) ignored.push({ path: ["tools", list], reason: `tools.${list} is ${describe(t[list])}, not a list, so it is ignored (as in pi-workflows)` });
      }
      for (const k of Object.keys(t)) if (k !== "blacklist" && k !== "whitelist") ignored.push({ path: ["tools", k], reason: `tools.${k} is not a tool rule (whitelist or blacklist), so it is ignored` });
      if (rules["blacklist"] !== undefined || rules["whitelist"] !== undefined) phase["tools"] = rules;
    }
  }
  const profiles = d["availableProfiles"];
  if (Array.isArray(profiles)) phase["availableProfiles"] = profiles.map(String);
  else if (profiles !== undefined && profiles !== null) ignored.push({ path: ["availableProfiles"], reason: `availableProfiles is ${describe(profiles)}, not a list, so it is ignored (as in pi-workflows)` });
  return phase;
}

/** A `{ subworkflow: key }` entry as pi-workflows reads it (extra fields ignored); undefined when it is none. */
export function referenceEntry(entry: Readonly<Record<string, unknown>>): { subworkflow: string } | undefined {
  return typeof entry["subworkflow"] === "string" ? { subworkflow: entry["subworkflow"] } : undefined;
}

/** Keys of `y` that are not among `known`: ignored (as pi-workflows ignores them), named with the closest field. */
function unknownKeys(y: Readonly<Record<string, unknown>>, known: readonly string[], where: string, ignored: IgnoredField[]): void {
  for (const key of Object.keys(y)) {
    if (known.includes(key)) continue;
    const near = closest(key, known);
    ignored.push({ path: [key], reason: `${key} is not a ${where} field, so it is ignored${near === undefined ? "" : ` (did you mean ${near}?)`}` });
  }
}

/** The known name within edit distance 2 of `word` (case-insensitive), if one is. */
function closest(word: string, known: readonly string[]): string | undefined {
  let best: { name: string; d: number } | undefined;
  for (const name of known) {
    const d = editDistance(word.toLowerCase(), name.toLowerCase());
    if (d <= 2 && (best === undefined || d < best.d)) best = { name, d };
  }
  return best?.name;
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row[j] = Math.min((prev[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = row;
  }
  return prev[b.length] ?? 0;
}

function describe(value: unknown): string {
  if (Array.isArray(value)) return "a list";
  if (value === null) return "null";
  if (typeof value === "object") return "a mapping";
  return `${typeof value} ${JSON.stringify(value)}`;
}
