/**
 * The compiled registry: the only value core's moves accept as definitions. Branded in the type system and
 * recorded in a module-private WeakSet at run time, so only `compileDefinitions` can make one: a hand-built
 * object or a state passed in its place is refused (INVALID_REGISTRY)
 * instead of being walked. Everything in it is frozen, its maps keep their entries in private fields (see
 * frozen.ts), so nothing can add a workflow or a cycle that compile ruled out.
 */
import type { WorkflowDefinition } from "./schema.js";
import { FrozenMap } from "./frozen.js";

declare const compiledBrand: unique symbol;

/** Nesting limit of sub-workflows (path levels, root included); compile refuses deeper chains (NESTING_TOO_DEEP). */
export const MAX_NESTING = 32;

/** A validated, frozen set of definitions, made only by `compileDefinitions`. */
export interface WorkflowRegistry {
  readonly [compiledBrand]: true;
  /** A Map (not a plain object) so that keys such as `__proto__` can never reach Object.prototype. */
  readonly workflows: ReadonlyMap<string, WorkflowDefinition>;
  /** Resolved `/command` name → workflow key, for the workflows that are shown. */
  readonly commands: ReadonlyMap<string, string>;
  /** Concrete phases of each workflow with every reference expanded (the completion message's count). */
  readonly phaseCounts: ReadonlyMap<string, number>;
  /** A canonical fingerprint of each workflow's compiled definition (see `checkDefinitions`). */
  readonly fingerprints: ReadonlyMap<string, string>;
}

const made = new WeakSet<object>();

/** Freezes and registers a registry; called by compileDefinitions only. */
export function sealRegistry(parts: Omit<WorkflowRegistry, typeof compiledBrand>): WorkflowRegistry {
  for (const def of parts.workflows.values()) deepFreeze(def);
  const registry = Object.freeze({
    workflows: frozenMap(parts.workflows),
    commands: frozenMap(parts.commands),
    phaseCounts: frozenMap(parts.phaseCounts),
    fingerprints: frozenMap(parts.fingerprints),
  }) as unknown as WorkflowRegistry;
  made.add(registry);
  return registry;
}

/** True only for a registry made by `compileDefinitions` of this copy of core. */
export function isCompiledRegistry(value: unknown): value is WorkflowRegistry {
  return typeof value === "object" && value !== null && made.has(value);
}

function frozenMap<K, V>(map: ReadonlyMap<K, V>): ReadonlyMap<K, V> {
  return new FrozenMap(map);
}

function deepFreeze(value: unknown): void {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v !== "object" || v === null || Object.isFrozen(v)) continue;
    Object.freeze(v);
    for (const k of Object.keys(v)) stack.push((v as Record<string, unknown>)[k]);
  }
}
