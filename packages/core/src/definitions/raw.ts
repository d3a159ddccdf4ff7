/**
 * A lenient, read-only view of raw definitions, used for the checks that must run even when zod rejects a
 * definition (so every problem is reported at once). Reads own properties only; never writes.
 */
import { KEY_PATTERN } from "./schema.js";

/** One workflow as written: its key and its raw definition. */
export interface RawWorkflow {
  readonly key: string;
  readonly def: unknown;
}

/** What the structural checks need from one phase entry, as far as it can be read. */
export interface RawPhaseView {
  readonly index: number;
  readonly id: string | undefined;
  /** The referenced workflow key, when the entry is a reference with a well-formed key. */
  readonly ref: string | undefined;
  readonly hasWhitelist: boolean;
  readonly hasBlacklist: boolean;
  /** The string entries of `availableProfiles`, with their positions. */
  readonly availableProfiles: ReadonlyArray<{ readonly index: number; readonly name: string }>;
}

/** What the structural checks need from one workflow. */
export interface RawWorkflowView {
  /** undefined when `phases` is not an array (zod reports that). */
  readonly phases: readonly RawPhaseView[] | undefined;
  readonly commandName: string | undefined;
  readonly show: boolean;
  /** Whether the workflow lists its `profiles` (only then are `availableProfiles` checked against it). */
  readonly declaresProfiles: boolean;
  readonly profileNames: ReadonlySet<string>;
}

type Obj = Readonly<Record<string, unknown>>;

/** A non-array object, or undefined. */
export function asObject(value: unknown): Obj | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Obj) : undefined;
}

/** An own property, or undefined: never reads through the prototype chain. */
export function own(obj: Obj | undefined, key: string): unknown {
  return obj !== undefined && Object.hasOwn(obj, key) ? obj[key] : undefined;
}

function strings(value: unknown): Array<{ index: number; name: string }> {
  if (!Array.isArray(value)) return [];
  const out: Array<{ index: number; name: string }> = [];
  for (let index = 0; index < value.length; index += 1) {
    const name: unknown = value[index];
    if (typeof name === "string") out.push({ index, name });
  }
  return out;
}

/**
 * The workflows in `raw`. Accepts a settings document `{ "workflows": { key: def } }`, a bare map
 * `{ key: def }`, or a `Map`. A top-level `workflows` entry counts as the wrapper unless it looks like a
 * definition itself (its `phases` is an array or its `name` a string), so a workflow may still be called "workflows".
 */
export function readWorkflows(raw: unknown): RawWorkflow[] | undefined {
  if (raw instanceof Map) {
    return [...raw.entries()].filter((e): e is [string, unknown] => typeof e[0] === "string").map(([key, def]) => ({ key, def }));
  }
  const top = asObject(raw);
  if (top === undefined) return undefined;
  const wrapped = asObject(own(top, "workflows"));
  // Keys are data: a workflow keyed "phases" or "name" has an object there, a definition has an array / a string.
  const looksLikeDefinition = wrapped !== undefined && (Array.isArray(own(wrapped, "phases")) || typeof own(wrapped, "name") === "string");
  const map = wrapped !== undefined && !looksLikeDefinition ? wrapped : top;
  return Object.keys(map).map((key) => ({ key, def: map[key] }));
}

function phaseView(entry: unknown, index: number): RawPhaseView {
  const obj = asObject(entry);
  const id = own(obj, "id");
  const ref = own(obj, "subworkflow");
  const tools = asObject(own(obj, "tools"));
  return {
    index,
    id: typeof id === "string" ? id : undefined,
    ref: typeof ref === "string" && KEY_PATTERN.test(ref) ? ref : undefined,
    hasWhitelist: own(tools, "whitelist") !== undefined,
    hasBlacklist: own(tools, "blacklist") !== undefined,
    availableProfiles: strings(own(obj, "availableProfiles")),
  };
}

/** Reads what the structural checks need from one raw definition, tolerating any shape. */
export function viewWorkflow(def: unknown): RawWorkflowView {
  const obj = asObject(def);
  const phases = own(obj, "phases");
  const commandName = own(obj, "commandName");
  const profiles = own(obj, "profiles");
  const profileNames = new Set<string>();
  if (Array.isArray(profiles)) {
    for (const p of profiles) {
      const name = own(asObject(p), "name");
      if (typeof name === "string") profileNames.add(name);
    }
  }
  return {
    phases: Array.isArray(phases) ? Array.from(phases as unknown[], (entry, i) => phaseView(entry, i)) : undefined,
    commandName: typeof commandName === "string" ? commandName : undefined,
    show: own(obj, "show") !== false,
    declaresProfiles: Array.isArray(profiles),
    profileNames,
  };
}

/** The distinct workflow keys a view references, each with the index of its first reference. */
export function referencesOf(view: RawWorkflowView): Map<string, number> {
  const refs = new Map<string, number>();
  for (const phase of view.phases ?? []) {
    if (phase.ref !== undefined && !refs.has(phase.ref)) refs.set(phase.ref, phase.index);
  }
  return refs;
}
