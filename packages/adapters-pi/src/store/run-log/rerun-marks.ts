/**
 * The rerun marks of a run log (reuse-decision.ts says what they mean): its `rerun` events, archived ones
 * included, read once per opening of the history and kept current by the holder that appends one.
 */
import { isSuperseded, rerunMarksOf, RERUN_EVENT, type RerunMark } from "../../engine/reuse-decision.js";
import { archivedRecords } from "./archive.js";
import type { RunIndex, StepEntry } from "./run-index.js";
import { eventValue } from "./state-keeper.js";
import type { ValueFiles } from "./values.js";

// How a rerun event's header reads in the run log's bytes (format.ts encodeLine: `{"t":"event","e":N,"name":…}`).
const RERUN_HEADER = `"name":${JSON.stringify(RERUN_EVENT)}`;

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
      const events = [...(this.archiveMayHoldMarks() ? archivedRecords(this.index, this.values).events : []), ...this.index.events].filter((e) => e.name === RERUN_EVENT);
      this.marks = rerunMarksOf(events.map((e) => ({ epoch: e.epoch, data: eventValue(this.values, e.data) })));
    }
    return this.marks;
  }

  // Decoding an archive parses a header per archived record (thousands for a long run), on the first step of
  // every opening: a search of its bytes for a rerun header skips that for the runs that never had a rerun.
  private archiveMayHoldMarks(): boolean {
    const a = this.index.archive;
    if (a === undefined) return false;
    if (a.decoded !== undefined) return true;
    const r = this.values.readBytes(a.loc);
    // Unreadable: let the decode report it where it always does.
    return !r.ok || r.bytes.includes(RERUN_HEADER);
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
