/**
 * pi-workflows 1.0.0 reads the fields of `workflow.yaml` and of a phase's front matter by type: an optional field
 * of the wrong type is ignored (`loopable: "yes"` means "not set"), list items become strings, a `tools` value that
 * is no mapping means no tool rules. A folder pi loads must load here with the same meaning, so the fields are read
 * the same way; what pi ignores silently is ignored here too, but with a warning that names the field.
 */

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
const PHASEKIT_WORKFLOW_FIELDS = ["name", "description", "maxLoops", "cancelledMessage", "profiles"] as const;

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
  // pi-workflows: show "workflows" = usable only inside other workflows, which is phasekit's show false.
  if (Object.hasOwn(y, "show")) def["show"] = typeof y["show"] === "boolean" ? y["show"] : y["show"] !== "workflows";
  return def;
}

/** A phase from its front matter and body, read as pi-workflows reads it (src/config/loading-parse.ts). */
export function phaseFields(d: Readonly<Record<string, unknown>>, body: string, ignored: IgnoredField[]): Record<string, unknown> {
  const phase: Record<string, unknown> = { id: d["id"], name: d["name"], emoji: d["emoji"] ?? "", instructions: body.trim() };
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

function describe(value: unknown): string {
  if (Array.isArray(value)) return "a list";
  if (value === null) return "null";
  if (typeof value === "object") return "a mapping";
  return `${typeof value} ${JSON.stringify(value)}`;
}
