/**
 * A run's timeline: its steps, workflow transitions, control requests, gates and time-travel marks in one list
 * in the order they happened, each a sentence, with durations; and each step's earlier attempts with their
 * errors (the history keeps a step's latest record; the journal tells the attempts that failed before it). Read
 * from the same views as `show` and `journal`, so it works on every store the CLI reads.
 */
import { duration } from "./format.js";
import { journalSentences } from "./journal-text.js";
import { withRunRead, type Roots, type RunRead, type StepView } from "./run-view.js";
import { viewStep } from "./run-summary.js";
import type { JournalEntry } from "../store/journal.js";
import { METADATA_DELTA_EVENT, METADATA_EVENT } from "../store/journal.js";

/** What an item of the timeline is about. */
export type TimelineKind = "step" | "attempt" | "transition" | "control" | "gate" | "state" | "time-travel" | "event";

/** One thing that happened. */
export interface TimelineEntry {
  at: string;
  kind: TimelineKind;
  text: string;
  /** The step it is about (steps and failed attempts). */
  step?: string;
  durationMs?: number | null;
  /** The journal entry's sequence number (journal items), for the raw entry. */
  seq?: number;
  /** A step that started a second or more after the step before it ended: how long the run waited. */
  waitMs?: number;
  /** Another run it names: the run a fork came from. */
  run?: string;
}

/** A failed attempt of a step, as the journal told it. */
export interface FailedAttempt {
  attempt: number;
  error: string;
  at: string;
}

/** The `phasekit.timeline/1` document: a page of the timeline, the current position, and failed attempts. */
export interface RunTimeline {
  schema: "phasekit.timeline/1";
  id: string;
  items: TimelineEntry[];
  page: { offset: number; limit: number; total: number };
  /** Where the run is now: its status, phase and the step in flight (or last completed). */
  current: { status: string; phase: string | null; step: string | null };
  /** Failed attempts by step key, oldest first (only steps that have some; only `step`'s when one is asked). */
  attempts: Record<string, FailedAttempt[]>;
}

/** Items a timeline page holds at most (a long run's timeline is paged like its steps). */
export const TIMELINE_PAGE = 200;

/** The timeline of run `target` (optionally only step `step`'s items), paged from `offset` (default: the newest). */
export async function runTimeline(roots: Roots, target: string, nowMs: number, o: { step?: string; offset?: number; limit?: number } = {}): Promise<RunTimeline> {
  return withRunRead(roots, target, nowMs, async (r) => timelineOf(r, o));
}

/** The timeline of a run read once (its steps and its journal from the same opening of its history). */
async function timelineOf(r: RunRead, o: { step?: string; offset?: number; limit?: number }): Promise<RunTimeline> {
  // A damaged journal leaves the steps' timeline readable (the page shows the journal's own error elsewhere).
  const journal = await r.journal().catch(() => [] as JournalEntry[]);
  const sentences = journalSentences(journal);
  const items: TimelineEntry[] = [];
  const attempts: Record<string, FailedAttempt[]> = {};
  journal.forEach((e, i) => {
    const kind = kindOf(e);
    const d = (e.data ?? {}) as { step?: unknown; attempt?: unknown; error?: unknown };
    if (kind === "attempt" && typeof d.step === "string") {
      (attempts[d.step] ??= []).push({ attempt: Number(d.attempt), error: String(d.error), at: e.at });
      items.push({ at: e.at, kind, text: sentences[i] ?? e.event, step: d.step, seq: e.seq });
    } else {
      const from = e.event === "forked" ? (e.data as { from?: unknown } | undefined)?.from : undefined;
      items.push({ at: e.at, kind, text: sentences[i] ?? e.event, seq: e.seq, ...(typeof from === "string" ? { run: from } : {}) });
    }
  });
  for (const s of r.steps.all()) items.push(stepItem(viewStep(s, r.live)));
  // Stable: items at the same instant keep the journal's (history) order, steps after it.
  items.sort((a, b) => Date.parse(a.at) - Date.parse(b.at));
  noteWaits(items);
  const shown = o.step === undefined ? items : items.filter((x) => x.step === o.step);
  const limit = Math.min(Math.max(1, o.limit ?? TIMELINE_PAGE), TIMELINE_PAGE);
  const total = shown.length;
  const offset = Math.min(o.offset ?? Math.max(0, total - limit), Math.max(0, total - 1));
  const s = r.summary;
  return {
    schema: "phasekit.timeline/1",
    id: s.id,
    items: shown.slice(offset, offset + limit),
    page: { offset, limit, total },
    current: { status: s.status, phase: s.phase, step: s.currentStep ?? s.lastStep },
    attempts: o.step === undefined ? attempts : o.step in attempts ? { [o.step]: attempts[o.step] as FailedAttempt[] } : {},
  };
}

function stepItem(s: StepView): TimelineEntry {
  const took = s.durationMs === null ? "" : ` in ${duration(s.durationMs)}`;
  const what =
    s.status === "completed" ? `completed${took}` : s.status === "failed" ? `failed${took}: ${s.error ?? "no message"}` : s.status === "in-flight" ? "running now" : "interrupted (its runner stopped mid-step)";
  return { at: s.startedAt, kind: "step", step: s.stepId, durationMs: s.durationMs, text: `step ${s.stepId} (attempt ${s.attempt}) ${what}` };
}

/** The waits between steps (a pause, a gate, a crash and its resume): a second or more from one's end to the next's start. */
function noteWaits(items: TimelineEntry[]): void {
  let lastEnd: number | undefined;
  for (const x of items) {
    if (x.kind !== "step") continue;
    const start = Date.parse(x.at);
    if (lastEnd !== undefined && start - lastEnd >= 1000) {
      x.waitMs = start - lastEnd;
      x.text += ` (after a wait of ${duration(x.waitMs)})`;
    }
    lastEnd = Math.max(lastEnd ?? 0, start + (x.durationMs ?? 0));
  }
}

/** What a journal entry is about (the timeline's kinds; `watchRun` types its events by the same rule). */
export function kindOf(e: JournalEntry): TimelineKind {
  if (e.event === METADATA_EVENT || e.event === METADATA_DELTA_EVENT) return "state";
  if (e.event === "step-failed") return "attempt";
  if (e.event.startsWith("workflow:")) return "transition";
  if (e.event === "paused" || e.event === "stopped" || e.event.startsWith("control")) return "control";
  if (e.event === "waiting" || e.event.startsWith("approval")) return "gate";
  if (e.event === "rerun" || e.event === "forked") return "time-travel";
  return "event";
}
