/**
 * The diff behind `checkDefinitions`, by phase identity (a phase's id, a reference's key): inserting a phase is one
 * "added", not "everything after changed". A run records one fingerprint per workflow, which tells whether a
 * workflow changed but not how; saying which phases changed needs the definitions the run started with (an
 * adapter keeps them, e.g. pinned in the session). Entries are aligned by the longest common subsequence of their
 * identities: an aligned entry whose content differs is "changed", an identity on both sides out of that order is
 * "moved", the rest "added" or "removed".
 */
import { fingerprint, workflowFingerprint } from "../definitions/fingerprint.js";
import type { WorkflowRegistry } from "../definitions/registry.js";
import type { PhaseEntry } from "../definitions/schema.js";
import type { WorkflowState } from "../state/schema.js";

/** How one phase entry of a changed workflow differs. */
export interface PhaseChange {
  /** 0-based position: in the new definition (added, changed, moved), in the one the run started with (removed). */
  readonly index: number;
  /** The entry's identity as the user wrote it: a phase id, or the key a reference points at. */
  readonly id: string;
  readonly change: "changed" | "added" | "removed" | "moved";
}

/** One workflow the run started on that is different now. */
export interface WorkflowChange {
  readonly workflowKey: string;
  readonly change: "changed" | "removed";
  /** Per-entry changes by identity (empty for a removed workflow, when only workflow fields changed, or when the definitions the run started with are not at hand). */
  readonly phases: readonly PhaseChange[];
}

/** Above this many cells the alignment falls back to position (a 3,000-phase workflow stays cheap). */
const MAX_ALIGN_CELLS = 1_000_000;

/** What names an entry across edits (a phase's id, a reference's key), kinds kept apart. */
function identity(entry: PhaseEntry): string {
  return "subworkflow" in entry ? `sub:${entry.subworkflow}` : `id:${entry.id}`;
}

function shownId(entry: PhaseEntry): string {
  return "subworkflow" in entry ? entry.subworkflow : entry.id;
}

/** The recorded workflows that differ in `registry`, keys sorted; per-phase changes when `pinned` has the old ones. */
export function diffDefinitions(registry: WorkflowRegistry, recorded: Readonly<Record<string, string>> | undefined, pinned?: WorkflowRegistry): WorkflowChange[] {
  if (recorded === undefined) return [];
  const out: WorkflowChange[] = [];
  for (const key of Object.keys(recorded).sort()) {
    const def = registry.workflows.get(key);
    if (def === undefined) {
      out.push({ workflowKey: key, change: "removed", phases: [] });
      continue;
    }
    const now = registry.fingerprints.get(key) ?? workflowFingerprint(def);
    if (now.slice(0, 16) === (recorded[key] as string).slice(0, 16)) continue;
    const before = pinned?.workflows.get(key);
    out.push({ workflowKey: key, change: "changed", phases: before === undefined ? [] : phaseChanges(before.phases, def.phases) });
  }
  return out;
}

/** The changes from entries `a` (before) to `b` (now), by identity, ordered by index. */
export function phaseChanges(a: readonly PhaseEntry[], b: readonly PhaseEntry[]): PhaseChange[] {
  const ia = a.map(identity);
  const ib = b.map(identity);
  const pairs: Array<[number, number]> = a.length * b.length > MAX_ALIGN_CELLS ? positionalPairs(ia, ib) : align(ia, ib);
  const matchedA = new Set(pairs.map(([i]) => i));
  const matchedB = new Set(pairs.map(([, j]) => j));
  const out: PhaseChange[] = [];
  for (const [i, j] of pairs) {
    if (fingerprint(a[i]) !== fingerprint(b[j])) out.push({ index: j, id: shownId(b[j] as PhaseEntry), change: "changed" });
  }
  const leftA = new Set(ia.filter((_, i) => !matchedA.has(i)));
  const leftB = new Set(ib.filter((_, j) => !matchedB.has(j)));
  b.forEach((e, j) => {
    if (!matchedB.has(j)) out.push({ index: j, id: shownId(e), change: leftA.has(ib[j] as string) ? "moved" : "added" });
  });
  a.forEach((e, i) => {
    if (!matchedA.has(i) && !leftB.has(ia[i] as string)) out.push({ index: i, id: shownId(e), change: "removed" });
  });
  return out.sort((x, y) => x.index - y.index || (x.change === "removed" ? -1 : 0) - (y.change === "removed" ? -1 : 0));
}

function positionalPairs(a: readonly string[], b: readonly string[]): Array<[number, number]> {
  const pairs: Array<[number, number]> = [];
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] === b[i]) pairs.push([i, i]);
  return pairs;
}

/** Index pairs of a longest common subsequence of `a` and `b`, in order. */
function align(a: readonly string[], b: readonly string[]): Array<[number, number]> {
  const n = a.length;
  const m = b.length;
  const len: Uint32Array[] = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) {
    const row = len[i] as Uint32Array;
    const below = len[i + 1] as Uint32Array;
    for (let j = m - 1; j >= 0; j--) row[j] = a[i] === b[j] ? (below[j + 1] as number) + 1 : Math.max(below[j] as number, row[j + 1] as number);
  }
  const pairs: Array<[number, number]> = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (a[i] === b[j]) pairs.push([i++, j++]);
    else if (((len[i + 1] as Uint32Array)[j] as number) >= ((len[i] as Uint32Array)[j + 1] as number)) i++;
    else j++;
  }
  return pairs;
}

/**
 * Whether the run's position names, in `registry`, the same entries it named in `pinned` (the definitions it was
 * on): false when a phase inserted or removed before it shifted the indexes, so the same path now points elsewhere.
 */
export function samePosition(registry: WorkflowRegistry, state: WorkflowState, pinned: WorkflowRegistry): boolean {
  for (const seg of state.currentPath) {
    const before = pinned.workflows.get(seg.workflowKey)?.phases[seg.phaseIndex];
    const now = registry.workflows.get(seg.workflowKey)?.phases[seg.phaseIndex];
    if (before === undefined || now === undefined || identity(before) !== identity(now)) return false;
  }
  return true;
}
