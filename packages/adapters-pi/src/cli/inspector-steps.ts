/**
 * Which steps a run page shows: a page of the steps in the order shown (by start time, a tie in history order),
 * the newest by default. A page names its neighbours by cursor: where its first and last step stand in that
 * order (their start time and history position), so asking for the page before or after it returns the steps
 * next to it even when the run has recorded more steps meanwhile, each step once.
 */
import { workflowError } from "@phasekit/core";
import type { StepRecord } from "../engine/records.js";
import { shownOrder } from "./run-summary.js";
import type { StepList } from "./history-view.js";

/** Steps a run page holds at most (the rest are paged: a 10,000-step run's first screen stays small). */
export const STEPS_PAGE = 200;

/** Which steps a page shows: from `offset`, or the page before or after a cursor (default: the newest page). */
export interface StepWindow {
  offset?: number;
  limit?: number;
  /** A page's `before` cursor: the steps just before the page that gave it. */
  before?: string;
  /** A page's `after` cursor: the steps just after the page that gave it. */
  after?: string;
}

/** The cursors a request names (`stepsBefore`, `stepsAfter`; checked when the page is read). */
export function stepCursors(url: URL): Pick<StepWindow, "before" | "after"> {
  const before = url.searchParams.get("stepsBefore");
  const after = url.searchParams.get("stepsAfter");
  return { ...(before === null ? {} : { before }), ...(after === null ? {} : { after }) };
}

/** Where a page stands: the first step's place, how many it holds at most, how many in all, its neighbours' cursors. */
export interface StepsPage {
  offset: number;
  limit: number;
  total: number;
  /** Cursor of the page before (older steps), null on the first page. */
  before: string | null;
  /** Cursor of the page after (newer steps), null on the newest page. */
  after: string | null;
}

/** A place in the order shown: a step's start time (ms), then its history position. */
interface Place {
  at: number;
  pos: number;
}

/** The records `window` shows of a run's steps, in the order shown (only theirs are made), and the page they make. */
export function pageOfSteps(steps: StepList, window: StepWindow): { shown: StepRecord[]; page: StepsPage } {
  if (window.before !== undefined && window.after !== undefined) {
    throw workflowError("cli", "INVALID_OPTIONS", "a steps page is asked before a cursor or after one, not both.", { field: "stepsBefore", hint: "follow one of the page's cursors" });
  }
  const order = shownOrder(steps);
  const placeAt = (i: number): Place => ({ at: steps.startedMs(order[i] as number), pos: order[i] as number });
  const total = order.length;
  const limit = Math.min(Math.max(1, window.limit ?? STEPS_PAGE), STEPS_PAGE);
  let from: number;
  let to: number;
  if (window.before !== undefined) {
    to = firstAtOrAfter(placeAt, total, parseCursor(window.before, "stepsBefore"));
    from = Math.max(0, to - limit);
  } else {
    if (window.after !== undefined) from = firstAfter(placeAt, total, parseCursor(window.after, "stepsAfter"));
    else from = Math.min(window.offset ?? Math.max(0, total - limit), Math.max(0, total - 1));
    to = Math.min(total, from + limit);
  }
  // An empty page (a cursor past either end) names the places just past the steps, so it still leads back.
  const before = from === 0 ? null : from < total ? cursorOf(placeAt(from)) : cursorOf(nextTo(placeAt(total - 1), 1));
  const after = to === total ? null : to > 0 ? cursorOf(placeAt(to - 1)) : cursorOf(nextTo(placeAt(0), -1));
  return { shown: order.slice(from, to).map((i) => steps.record(i)), page: { offset: from, limit, total, before, after } };
}

function nextTo(p: Place, by: 1 | -1): Place {
  return { at: p.at, pos: p.pos + by };
}

function cursorOf(p: Place): string {
  return `${new Date(p.at).toISOString()}~${p.pos}`;
}

function compare(a: Place, b: Place): number {
  return a.at < b.at ? -1 : a.at > b.at ? 1 : a.pos - b.pos;
}

/** The first index whose place is at or after `c` (total when none). */
function firstAtOrAfter(placeAt: (i: number) => Place, total: number, c: Place): number {
  let lo = 0;
  let hi = total;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compare(placeAt(mid), c) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The first index whose place is strictly after `c`. */
function firstAfter(placeAt: (i: number) => Place, total: number, c: Place): number {
  const i = firstAtOrAfter(placeAt, total, c);
  return i < total && compare(placeAt(i), c) === 0 ? i + 1 : i;
}

const CURSOR = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z)~(-?\d{1,9})$/;

function parseCursor(text: string, field: string): Place {
  const m = CURSOR.exec(text);
  if (m === null || Number.isNaN(Date.parse(m[1] as string))) {
    throw workflowError("cli", "INVALID_OPTIONS", `${field} is not a steps cursor: ${JSON.stringify(text)}.`, {
      field,
      value: text,
      hint: "pass the `before` or `after` of a page's stepsPage as it was given",
    });
  }
  return { at: Date.parse(m[1] as string), pos: Number(m[2]) };
}
