/**
 * The rerun marks of a run log (reuse-decision.ts says what they mean): its `rerun` events, archived ones
 * included, read once per opening of the history and kept current by the holder that appends one.
 */
import { isSuperseded, rerunMarksOf, RERUN_EVENT, type RerunMark } from "../reuse-decision.js";
import { archivedRecords } from "./archive.js";
import type { RunIndex, StepEntry } from "./run-index.js";
import { eventValue } from "./state-keeper.js";
import type { ValueFiles } from "./values.js";

/** The marks of `index`, computed on first use. */
export class RerunMarks {
  private marks: RerunMark[] | undefined;

  constructor(
    private readonly index: RunIndex,
    private readonly values: ValueFiles,
  ) {}

  /** Every mark, oldest first. */
  all(): RerunMark[] {
    if (this.marks === undefined) {
      const events = [...archivedRecords(this.index, this.values).events, ...this.index.events].filter((e) => e.name === RERUN_EVENT);
      this.marks = rerunMarksOf(events.map((e) => ({ epoch: e.epoch, data: eventValue(this.values, e.data) })));
    }
    return this.marks;
  }

  /** Forgets what was read (the holder appended a mark). */
  reset(): void {
    this.marks = undefined;
  }

  /** `entry` as the reuse decision must see it: flagged `superseded` when a later mark names it. */
  view(entry: StepEntry | undefined): StepEntry | undefined {
    if (entry === undefined) return undefined;
    const marks = this.all();
    return marks.length > 0 && isSuperseded(entry.key, entry.epoch, marks) ? { ...entry, superseded: true } : entry;
  }
}
