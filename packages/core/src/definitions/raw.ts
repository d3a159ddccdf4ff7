/**
 * A lenient, read-only view of raw definitions, used for the checks that must run even when zod rejects a
 * definition (so every problem is reported at once). Reads the plain copy made at the boundary (plain.ts), so it
 * sees exactly what zod sees; never writes.
 */
import { describeValue, type FieldPath } from "../errors/problems.js";
import { plainCopy } from "./plain.js";
import { KEY_PATTERN } from "./schema.js";

/** One workflow as written: its key and its raw definition. */
export interface RawWorkflow {
  readonly key: string;
  /** The plain copy of the definition (undefined when it could not be read: see `unreadable`). */
  readonly def: unknown;
  readonly unreadable?: Unreadable;
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

/** Why one top-level entry could not be read as a workflow (`path` relative to it). */
export interface Unreadable {
  readonly path: FieldPath;
  readonly reason: string;
}

/** What the top level holds: the workflows by key, each a plain copy or why it is not plain data. */
export interface RawSet {
  readonly workflows: RawWorkflow[];
  /** Entries that name no workflow key (a Map key that is not a string), for problems at the root. */
  readonly rootProblems: Array<{ readonly reason: string }>;
}

function entry(key: string, value: unknown): RawWorkflow {
  const copy = plainCopy(value);
  return copy.ok ? { key, def: copy.value } : { key, def: undefined, unreadable: { path: copy.path, reason: copy.reason } };
}

/**
 * The workflows in `raw`, which is always a map of workflows by key: a plain object `{ key: def }` or a `Map`.
 * Keys are never guessed from values (a settings document is compiled as `compileDefinitions(doc.workflows)`).
 * Every entry is read once into own, plain data (see plain.ts); an entry that cannot be is kept, with why, so
 * it is reported and never dropped in silence. undefined when `raw` is not such a map.
 */
export function readWorkflows(raw: unknown): RawSet | undefined {
  const workflows: RawWorkflow[] = [];
  const rootProblems: Array<{ reason: string }> = [];
  if (raw instanceof Map) {
    let i = 0;
    for (const [key, def] of raw) {
      if (typeof key === "string") workflows.push(entry(key, def));
      else rootProblems.push({ reason: `Map entry ${i} has the key ${describeValue(key)}, not a string, so it names no workflow` });
      i += 1;
    }
    return { workflows, rootProblems };
  }
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return undefined;
  const proto = Object.getPrototypeOf(raw) as object | null;
  if (proto !== null && proto !== Object.prototype && !isKeyedObject(raw)) return undefined;
  for (const key of Object.getOwnPropertyNames(raw)) {
    const desc = Object.getOwnPropertyDescriptor(raw, key);
    if (desc === undefined) continue;
    if (!("value" in desc)) workflows.push({ key, def: undefined, unreadable: { path: [], reason: "is an accessor (a getter or setter), not a data field; pass plain data" } });
    else workflows.push(entry(key, desc.value));
  }
  // Workflows inherited from a prototype would be seen by nobody: name each one.
  const seen = new Set(workflows.map((w) => w.key));
  for (let p = proto; p !== null && p !== Object.prototype; p = Object.getPrototypeOf(p) as object | null) {
    for (const key of Object.getOwnPropertyNames(p)) {
      if (key === "constructor" || seen.has(key)) continue;
      seen.add(key);
      workflows.push({ key, def: undefined, unreadable: { path: [], reason: "is inherited from a prototype, not an own field; copy it onto the object ({ ...defaults, ...value })" } });
    }
  }
  return { workflows, rootProblems };
}

/** A top level with a prototype that may still be a map by key (a class instance, Object.create), unlike a Date or Set. */
function isKeyedObject(raw: object): boolean {
  return !(raw instanceof Set || raw instanceof Date || raw instanceof RegExp || raw instanceof WeakMap || raw instanceof WeakSet);
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
