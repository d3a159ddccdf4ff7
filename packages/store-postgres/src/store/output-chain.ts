/**
 * Step outputs stored as deltas on PostgreSQL, with the fs run log's codec and rule (docs/decisions.md D16,
 * adapters-pi's store-kit): an artifact row whose `base` is set holds in `body` the canonical JSON of the delta
 * operations that turn the output `base` names (an artifact of the same run) into this one. A holder writes
 * each output as a delta on the last output it stored when the delta is under half the value, and whole
 * otherwise, after OUTPUT_CHAIN deltas, and as its first output (a resumed holder starts a new chain).
 *
 * What a step hands out is still checked whole: the materialized value's canonical bytes must hash to the
 * step's output fingerprint. A chain that cannot be followed (a base gone: artifact-missing; a body that is no
 * JSON, ops that do not fit their base, a loop or a chain longer than any writer makes: artifact-corrupt), or
 * whose value does not hash to the fingerprint, reruns the step; it never yields a wrong output.
 */
import { applyDelta, MAX_CHAIN_LINKS, parseDelta, smallDelta, verifiedText } from "@phasekit/adapters-pi/store-kit";
import type { JsonValue } from "@phasekit/adapters-pi";

/**
 * Deltas after a whole output before the next whole one: twice the fs run log's MAX_OUTPUT_CHAIN. Here a
 * chain costs no extra round trip, whatever its length: the statement that fetches an output fetches every
 * base of its chain (artifact-reads.ts), so a longer chain is only more small rows in that answer and more
 * deltas applied on a hit out of order. The whole values are most of the bytes: at 64, 1,000 changing 10 KB
 * outputs fit the 1 MiB budget (docs/benchmarks.md), which 32 missed. Tied to the readers' bound, which
 * stays twice the longest chain a writer makes.
 */
export const OUTPUT_CHAIN = MAX_CHAIN_LINKS / 2;

/** An artifact row as written: `base` null for a whole value. */
export interface ArtifactRow {
  fp: string;
  body: string;
  base: string | null;
}

/** A stored output as the reuse check sees it: its canonical text, or why there is none. */
export type ResolvedOutput = { ok: true; text: string } | { ok: false; reason: "artifact-missing" | "artifact-corrupt" };


/** A row as `OutputChain.row` made it, for `stored` once it landed. */
export interface ChainedRow {
  row: ArtifactRow;
  value: JsonValue;
  links: number;
  era: number;
}

/**
 * The holder's side: which row the next output is a delta on (see the file comment). A compaction deletes what no
 * step record names: while one runs (`compacting`), outputs are stored whole and none becomes a base, and a row
 * made before it (`era`) is never taken as a base after it (its base, or the row itself, may be gone).
 */
export class OutputChain {
  private last: { fp: string; value: JsonValue; links: number } | undefined;
  private era = 0;
  private compacting = 0;

  /**
   * The row to store output `fp` (canonical JSON `text`; `value`, a copy equal to its parse, this chain's to keep)
   * as: a delta on the last stored output when that pays and `whole` is not asked.
   */
  row(fp: string, text: string, value: JsonValue, whole = false): ChainedRow {
    const base = this.compacting > 0 ? undefined : this.last;
    const ops = !whole && base !== undefined && base.fp !== fp && base.links < OUTPUT_CHAIN ? smallDelta(base.value, value, text.length) : undefined;
    if (base === undefined || ops === undefined) return { row: { fp, body: text, base: null }, value, links: 0, era: this.era };
    return { row: { fp, body: ops, base: base.fp }, value, links: base.links + 1, era: this.era };
  }

  /**
   * The row was stored (acknowledged, inserted by this statement): the next output may be a delta on it. A row
   * that was there already (same content) is not taken as a base: its chain is not known here.
   */
  stored(written: ChainedRow): void {
    if (written.era !== this.era || this.compacting > 0) return;
    this.last = { fp: written.row.fp, value: written.value, links: written.links };
  }

  /** A compaction starts: no base until it ends (see the class comment). */
  beginCompaction(): void {
    this.compacting++;
    this.era++;
    this.last = undefined;
  }

  /** The compaction ended (committed or not): the next output is stored whole. */
  endCompaction(): void {
    this.compacting--;
    this.era++;
    this.last = undefined;
  }
}

/**
 * The outputs `wanted` resolved from `rows` (each wanted row and every base of its chain, as one read fetched
 * them), each checked whole against its fingerprint. Values met on the way are shared across the wanted ones,
 * so consecutive outputs of one chain cost one delta each.
 */
export function resolveOutputs(rows: readonly ArtifactRow[], wanted: readonly string[]): Map<string, ResolvedOutput> {
  const byFp = new Map(rows.map((r) => [r.fp, r]));
  const memo = new Map<string, JsonValue | Failure>();
  const out = new Map<string, ResolvedOutput>();
  for (const fp of wanted) {
    const row = byFp.get(fp);
    if (row === undefined) continue;
    // A whole value is handed over as stored; the caller's check hashes it.
    if (row.base === null) {
      out.set(fp, { ok: true, text: row.body });
      continue;
    }
    const value = materialize(byFp, fp, memo);
    if (value instanceof Failure) out.set(fp, { ok: false, reason: value.reason });
    else {
      const text = verifiedText(value, fp);
      out.set(fp, text === undefined ? { ok: false, reason: "artifact-corrupt" } : { ok: true, text });
    }
  }
  return out;
}

class Failure {
  constructor(readonly reason: "artifact-missing" | "artifact-corrupt") {}
}

// Walks back from `fp` to a whole value (or one materialized already), then applies the deltas forward,
// remembering each value on the way. Values in `memo` are shared: applyDelta copies what it changes.
function materialize(rows: Map<string, ArtifactRow>, fp: string, memo: Map<string, JsonValue | Failure>): JsonValue | Failure {
  const links: ArtifactRow[] = [];
  let at = fp;
  let value: JsonValue | Failure;
  for (;;) {
    const known = memo.get(at);
    if (known !== undefined) {
      value = known;
      break;
    }
    const row = rows.get(at);
    if (row === undefined) {
      value = new Failure("artifact-missing");
      break;
    }
    if (row.base === null) {
      value = parsed(row.body);
      memo.set(at, value);
      break;
    }
    if (links.length >= MAX_CHAIN_LINKS) {
      value = new Failure("artifact-corrupt");
      break;
    }
    links.push(row);
    at = row.base;
  }
  for (let i = links.length - 1; i >= 0; i--) {
    const link = links[i] as ArtifactRow;
    if (!(value instanceof Failure)) {
      try {
        const ops = parseDelta(JSON.parse(link.body));
        value = applyDelta(value, ops);
      } catch {
        value = new Failure("artifact-corrupt");
      }
    }
    memo.set(link.fp, value);
  }
  return value;
}

function parsed(body: string): JsonValue | Failure {
  try {
    return JSON.parse(body) as JsonValue;
  } catch {
    return new Failure("artifact-corrupt");
  }
}
