/**
 * The engine's history port over the entry port (entry-port.ts): a backend that only claims epochs, appends
 * fenced entries, reads from a position and keeps blobs gets the whole `CheckpointStore` (checkpoints.ts) from
 * this: the index of every step's latest record (folded from the entries once per lease, kept current by the
 * holder's own appends), rerun marks judged by epoch (reuse-decision.ts), output checks, and what compaction keeps.
 */
import { workflowError } from "@phasekit/core";
import type { EntryPort, HistoryEntry, StoredEntry } from "./entry-port.js";
import { commitsFrom } from "./commit-record.js";
import { fingerprintOfCanonical } from "./fingerprint.js";
import type { HistoryPort } from "./history-port.js";
import type { StepRecord } from "./records.js";
import type { RerunMark } from "./reuse-decision.js";
import { rerunFlags, type SpentMarks } from "./rerun-spent.js";

/** Options of `historyOverEntries`. */
export interface EntryHistoryOptions {
  /** The run's slug, named in hints. */
  run: string;
  /** The lease's epoch (its appends are fenced by it); null for a reader, which re-reads on every call. */
  epoch: number | null;
  now: () => Date;
  /** The store's rule on who may write (a reader: LOCK_NOT_OWNED; a displaced lease: LOCK_LOST), before any work. */
  mayWrite: (what: string) => void;
}

/** The entries folded: each step's and commit's latest entry, the rerun marks and spends, where the holder appends next. */
interface Folded {
  steps: Map<string, StoredEntry>;
  /** Each step key's first position: the order the run first recorded its steps in (what a rerun's keys follow). */
  first: Map<string, number>;
  commits: Map<string, StoredEntry>;
  marks: RerunMark[];
  spends: SpentMarks[];
  /** The entries of every mark and spend: compaction keeps them all. */
  markEntries: StoredEntry[];
  count: number;
  next: number;
}

const emptyFold = (): Folded => ({ steps: new Map(), first: new Map(), commits: new Map(), marks: [], spends: [], markEntries: [], count: 0, next: 0 });

function foldInto(f: Folded, stored: readonly StoredEntry[]): void {
  for (const s of stored) {
    const e = s.entry;
    // Keyed by whatever id a damaged record carries: commits() reports it (commitsFrom) instead of dropping it.
    if (e.t === "commit") f.commits.set(String((e.record as { id?: unknown } | null)?.id), s);
    else if (e.t === "rerun") {
      f.marks.push({ epoch: s.epoch, from: e.from, keys: e.keys });
      f.markEntries.push(s);
    } else if (e.t === "spent") {
      f.spends.push({ epoch: s.epoch, keys: e.keys });
      f.markEntries.push(s);
    } else {
      // Re-set so a key keeps its first place in the map: the order the run first recorded its steps.
      f.steps.set(e.key, s);
      if (!f.first.has(e.key)) f.first.set(e.key, s.pos);
    }
    f.count++;
    f.next = Math.max(f.next, s.pos + 1);
  }
}

/** The port's record of a step entry, flagged `superseded` where a later lease's mark names it (and `rerunSpent` where that mark is spent). */
function recordOf(s: StoredEntry, f: Folded): StepRecord {
  const e = s.entry as Exclude<HistoryEntry, { t: "commit" } | { t: "rerun" } | { t: "spent" }>;
  const base = { v: 1 as const, kind: "step" as const, stepId: e.key, attempt: e.attempt, inputFingerprint: e.input };
  const record: StepRecord =
    e.t === "start"
      ? { ...base, status: "started", startedAt: e.at }
      : e.t === "fail"
        ? { ...base, status: "failed", startedAt: e.startedAt, finishedAt: e.at, error: e.error }
        : { ...base, status: "completed", outputFingerprint: e.output, startedAt: e.startedAt, finishedAt: e.at };
  const flags = rerunFlags(e.key, s.epoch, f.marks, f.spends);
  return flags === undefined ? record : { ...record, ...flags };
}

/**
 * The history port of one run over `port`, for the lease of `options.epoch` (or a reader). Make one per lease and
 * share it: a second one under the same lease folds on its own and misses the first one's appends.
 */
export async function historyOverEntries(port: EntryPort, options: EntryHistoryOptions): Promise<HistoryPort<StepRecord, StepRecord>> {
  const { epoch, mayWrite } = options;
  const load = async (): Promise<Folded> => {
    const f = emptyFold();
    foldInto(f, await port.read(0));
    return f;
  };
  // A holder folds once and then knows every append (its fence keeps others out); a reader reads afresh.
  let held = epoch === null ? null : await load();
  const view = async (): Promise<Folded> => held ?? load();
  // A compaction keeps what the fold knows: an append that landed but is not folded yet (its answer on its way)
  // would be dropped with its output while its step is acknowledged. So writes and a compaction exclude each
  // other: a compaction waits for the writes in flight, and a write waits for the compaction running.
  const inflight = new Set<Promise<unknown>>();
  let compacting: Promise<unknown> | null = null;
  const writing = async <T>(fn: () => Promise<T>): Promise<T> => {
    while (compacting !== null) await compacting.catch(() => undefined);
    const p = fn();
    inflight.add(p);
    try {
      return await p;
    } finally {
      inflight.delete(p);
    }
  };
  const write = async (entries: HistoryEntry[]): Promise<void> => {
    if (held === null || epoch === null) throw workflowError("checkpoints", "LOCK_NOT_OWNED", `run ${options.run}: ${port.file} was opened to read.`, { file: port.file });
    // The store's rule at every append, not only before the step: a body that ran while the lease ended (its store
    // closed) records nothing, though no later epoch fences it.
    mayWrite(`writing ${entries.map((e) => e.t).join(", ")} to the history`);
    await port.append(epoch, entries);
    const f = held;
    foldInto(
      f,
      entries.map((entry, i) => ({ pos: f.next + i, epoch, entry })),
    );
  };
  const stamp = (): string => options.now().toISOString();
  const started = (r: StepRecord) => ({ key: r.stepId, attempt: r.attempt, input: r.inputFingerprint, startedAt: r.startedAt });

  return {
    file: port.file,
    run: options.run,
    now: options.now,
    mayWrite,
    async latest(key) {
      const f = await view();
      const s = f.steps.get(key);
      return s === undefined ? undefined : recordOf(s, f);
    },
    async stored(_record, outputFingerprint) {
      const text = await port.getBlob(outputFingerprint);
      if (text === undefined) return { ok: false, reason: "artifact-missing" };
      return fingerprintOfCanonical(text) === outputFingerprint ? { ok: true, output: JSON.parse(text) } : { ok: false, reason: "artifact-corrupt" };
    },
    async start({ key, attempt, inputFingerprint }) {
      const at = stamp();
      await writing(() => write([{ t: "start", key, attempt, input: inputFingerprint, at }]));
      return { v: 1, kind: "step", stepId: key, status: "started", attempt, inputFingerprint, startedAt: at };
    },
    // The store's rule, once more right before the body: a lease displaced since the start never starts the work.
    beforeBody: (s) => mayWrite(`ctx.step("${s.stepId}")`),
    async fail(s, error) {
      const at = stamp();
      await writing(() => write([{ t: "fail", ...started(s), at, error }]));
    },
    async complete(s, { text, fingerprint }) {
      // The blob and the entry naming it in one write: a compaction between them would drop the blob.
      const at = stamp();
      await writing(async () => {
        await port.putBlob(fingerprint, text);
        await write([{ t: "done", ...started(s), at, output: fingerprint }]);
      });
      return { ...s, status: "completed", outputFingerprint: fingerprint, finishedAt: at };
    },
    view: (record) => record,
    async records() {
      const f = await view();
      return [...f.steps.values()].map((s) => recordOf(s, f));
    },
    async commits() {
      return commitsFrom([...(await view()).commits.values()].map((s) => ({ data: (s.entry as { record: unknown }).record, file: port.file, place: { entry: s.pos } })));
    },
    async putCommit(record) {
      await writing(() => write([{ t: "commit", record }]));
      return record;
    },
    async mark({ from, keys, at, reason }) {
      await writing(() => write([{ t: "rerun", from, keys, at, ...(reason === undefined ? {} : { reason }) }]));
    },
    async spend({ keys, at }) {
      await writing(() => write([{ t: "spent", keys, at }]));
    },
    // Keeps each step's and commit's latest entry with the epoch that wrote it and every mark and spend (both are
    // judged by epoch, so positions may close up), and the outputs completed records name; the rest goes.
    async compact() {
      while (compacting !== null) await compacting.catch(() => undefined);
      const run = (async () => {
        await Promise.allSettled([...inflight]);
        const f = await view();
        // A step's latest entry takes the place of the key's first one, so the history keeps the order the run first
        // recorded its steps in (a step run again late would otherwise move behind the steps after it, and a rerun
        // from one of those would supersede it). That place held an entry of the same key, so no two collide.
        const steps = [...f.steps].map(([key, s]) => ({ ...s, pos: f.first.get(key) ?? s.pos }));
        const keep = [...steps, ...f.commits.values(), ...f.markEntries].sort((a, b) => a.pos - b.pos);
        const blobs = new Set<string>();
        for (const s of f.steps.values()) if (s.entry.t === "done") blobs.add(s.entry.output);
        const { removedBlobs } = await port.compact(epoch ?? -1, keep, blobs);
        held = await load();
        return { recordsBefore: f.count, recordsAfter: keep.length, artifactsRemoved: removedBlobs };
      })();
      compacting = run;
      try {
        return await run;
      } finally {
        compacting = null;
      }
    },
  };
}
