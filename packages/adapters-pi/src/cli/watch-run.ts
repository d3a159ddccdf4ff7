/**
 * `watchRun(target)`: a run's history as typed events, as they happen, for code that reacts or renders. It reads
 * what `phasekit journal --follow`, `show` and the inspector's timeline read (run-view.ts: the run's detail, journal
 * and holder; the timeline's kinds; the journal's sentences; budget-view.ts: what the run spent), looking again every `intervalMs`, and ends when the
 * run has nothing more coming (the followers' one rule, `followVerdict`). Each look is one reading of the run (a plan
 * folder's history opened once) and takes only the journal entries past the last one seen. Nothing here writes.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { JournalEntry } from "../store/journal.js";
import { parseStoreUrl } from "../store/store-url.js";
import type { BudgetUsage } from "@phasekit/core";
import { budgetSpentIn, type BudgetSpent } from "./budget-view.js";
import { journalSentences, type SentenceCarry } from "./journal-text.js";
import { kindOf } from "./run-timeline.js";
import { detailOf, locateRun, followVerdict, withRunRead, type Roots, type RunDetail, type ShownStatus, type StepView } from "./run-view.js";
import { workflowError } from "@phasekit/core";

/** Where the run is and how to watch it. */
export interface WatchRunOptions {
  /** The repository whose plan root holds the run (also where a store URL's relative paths start). */
  repoRoot: string;
  planRoot?: string | undefined;
  /** A store named by URL (`postgres://…`) instead of the plan folder; the run is read from it. */
  store?: string | undefined;
  /** How long to wait between looks (ms, default 250). */
  intervalMs?: number | undefined;
  /** Ends the iteration (no error) when aborted. */
  signal?: AbortSignal | undefined;
}

/** A journal entry, typed by what it is about (a workflow transition, a control request, a gate, time travel). */
export interface RunJournalEvent {
  type: "transition" | "control" | "gate" | "time-travel" | "event";
  at: string;
  seq: number;
  /** The journal's own name (`workflow:advanced`, `paused`, `waiting`, `approval`, `rerun`, …). */
  event: string;
  /** The same sentence `phasekit journal` prints. */
  text: string;
  data: unknown;
}

/** One event of a watched run. */
export type RunEvent =
  | {
      type: "step";
      at: string;
      step: string;
      /** `running` while its runner holds the lock, `interrupted` when the runner died mid-step. */
      status: "running" | "completed" | "failed" | "interrupted";
      attempt: number;
      durationMs: number | null;
      error: string | null;
    }
  | RunJournalEvent
  /** What the run has spent (its recorded running total: `ctx.budget`, or a pi run's turns), each time it changes (a rerun that spends less makes it smaller). Plan folders only. */
  | { type: "budget"; at: string; used: Omit<BudgetUsage, "wallTimeMs"> }
  /** The run's status or phase changed (`reason`: why it paused, failed or was cancelled, e.g. a budget). */
  | { type: "status"; at: string; status: ShownStatus; phase: string | null; reason: string | null }
  /** Nothing more is coming: the last event. */
  | { type: "end"; at: string; status: ShownStatus };

/** Yields the events of run `target` (id, slug or path) from its start, then as they happen, until it ends. */
export async function* watchRun(target: string, options: WatchRunOptions): AsyncGenerator<RunEvent, void, undefined> {
  const interval = options.intervalMs ?? 250;
  if (!Number.isSafeInteger(interval) || interval < 1) {
    throw workflowError("watch", "INVALID_OPTIONS", `watchRun: intervalMs must be an integer ≥ 1, not ${String(interval)}.`, { field: "intervalMs", value: interval, hint: "leave it out for 250 ms" });
  }
  const roots: Roots = { repoRoot: options.repoRoot, ...(options.planRoot === undefined ? {} : { planRoot: options.planRoot }), ...(options.store === undefined ? {} : { store: parseStoreUrl(options.store, "store") }) };
  const location = await locateRun(roots, target);
  const ref = roots.store === undefined ? location.runDir : location.slug;
  let seenSeq = 0;
  const shownSteps = new Map<string, string>();
  let shownStatus = "";
  let shownBudget = "";
  let unreadableLooks = 0;
  const carry: SentenceCarry = {};
  while (options.signal?.aborted !== true) {
    const { detail, live, spent, journal } = await look(roots, ref, seenSeq);
    const fresh: RunEvent[] = [...journalEvents(journal, carry), ...stepEvents(detail.steps, shownSteps)];
    if (spent !== null && JSON.stringify(spent.used) !== shownBudget) {
      shownBudget = JSON.stringify(spent.used);
      fresh.push({ type: "budget", at: spent.at, used: spent.used });
    }
    seenSeq = journal.reduce((n, e) => Math.max(n, e.seq), seenSeq);
    // Stable: events at the same instant keep the journal's order, steps after it (the timeline's order).
    yield* fresh.sort((a, b) => Date.parse(a.at) - Date.parse(b.at));
    const s = detail.summary;
    const reason = detail.metadata?.failureReason ?? null;
    const status = `${s.status}|${s.phase ?? ""}|${reason ?? ""}`;
    if (status !== shownStatus) {
      shownStatus = status;
      yield { type: "status", at: s.updatedAt ?? new Date().toISOString(), status: s.status, phase: s.phase, reason };
    }
    const next = followVerdict(unreadableLooks, s, live);
    unreadableLooks = next.unreadableLooks;
    if (next.verdict === "unreadable" && s.error !== null) throw workflowError("watch", s.error.code as "CORRUPT_FILE", `run ${location.slug} cannot be watched: ${s.error.message}`, { file: location.runDir });
    if (next.verdict === "ended") {
      // No live holder at this look's check, made before its reads (withRunRead): the holder journaled its last
      // lines (`paused` after the paused state) before it let go, so this look read them.
      yield { type: "end", at: new Date().toISOString(), status: s.status };
      return;
    }
    await sleep(interval, undefined, options.signal === undefined ? {} : { signal: options.signal }).catch(() => undefined);
  }
}

/**
 * One look at the run, from one reading of it (a plan folder's history opened once): its detail, what it spent
 * (`budgetSpentIn`, as the inspector's run page reads it; a store named by URL keeps its budget entries where
 * this reader does not look yet, docs/gates.md) and the journal entries past seq `after`. A damaged journal
 * leaves the steps and the status watchable, as on the timeline.
 */
async function look(roots: Roots, ref: string, after: number): Promise<{ detail: RunDetail; live: boolean; spent: BudgetSpent | null; journal: JournalEntry[] }> {
  return withRunRead(roots, ref, Date.now(), async (r) => ({
    detail: detailOf(r),
    live: r.live,
    spent: r.log === undefined ? null : await budgetSpentIn(r.log).catch(() => null),
    journal: await r.journal(after).catch(() => [] as JournalEntry[]),
  }));
}

function journalEvents(journal: readonly JournalEntry[], carry: SentenceCarry): RunEvent[] {
  // Sentences tell each state against the one before: the page before's last state is in `carry`.
  const sentences = journalSentences(journal, carry);
  const out: RunEvent[] = [];
  journal.forEach((e, i) => {
    const kind = kindOf(e);
    // Metadata snapshots become `status` events (from the run's summary, in the loop above).
    if (kind === "state" || kind === "step") return;
    if (kind === "attempt") {
      const d = (e.data ?? {}) as { step?: unknown; attempt?: unknown; error?: unknown };
      if (typeof d.step === "string") out.push({ type: "step", at: e.at, step: d.step, status: "failed", attempt: Number(d.attempt), durationMs: null, error: String(d.error) });
      return;
    }
    out.push({ type: kind, at: e.at, seq: e.seq, event: e.event, text: sentences[i] ?? e.event, data: e.data ?? null });
  });
  return out;
}

// A step's latest record says running, completed or interrupted; its failed attempts are read from the journal
// (`step-failed`), since a retry replaces the record before a look may see it.
function stepEvents(steps: readonly StepView[], shown: Map<string, string>): RunEvent[] {
  const out: RunEvent[] = [];
  for (const v of steps) {
    const status = v.status === "in-flight" ? "running" : v.status;
    if (status === "failed") continue;
    const key = `${status}#${v.attempt}`;
    if (shown.get(v.stepId) === key) continue;
    shown.set(v.stepId, key);
    out.push({ type: "step", at: v.finishedAt ?? v.startedAt, step: v.stepId, status, attempt: v.attempt, durationMs: v.durationMs, error: v.error });
  }
  return out;
}
