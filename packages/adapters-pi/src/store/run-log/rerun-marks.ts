/**
 * The rerun marks of a run log (reuse-decision.ts says what they mean) and their spends (rerun-spent.ts): its
 * `rerun` and `rerun-spent` events, archived ones included, read once per opening of the history and kept current
 * by the holder that appends one.
 */
import { rerunMarksOf, RERUN_EVENT, type RerunMark } from "../../engine/reuse-decision.js";
import { rerunFlags, RERUN_SPENT_EVENT, spentMarksOf, type SpentMarks } from "../../engine/rerun-spent.js";
import { archivedRecords } from "./archive.js";
import type { RunIndex, StepEntry } from "./run-index.js";
import { placeEvent } from "./state-keeper.js";
import type { ValueFiles } from "./values.js";

// How a rerun event's header reads in the run log's bytes (format.ts encodeLine: `{"t":"event","e":N,"name":…}`).
// A spend comes after the mark it spends, so an archive that holds a spend holds a mark too.
const RERUN_HEADER = `"name":${JSON.stringify(RERUN_EVENT)}`;

/** The marks of `index` and their spends, computed on first use. */
export class RerunMarks {
  private read: { marks: RerunMark[]; spends: SpentMarks[] } | undefined;

  constructor(
    private readonly index: RunIndex,
    private readonly values: ValueFiles,
    /** The log's folder: where an event without a value is said to lie when its data is damaged. */
    private readonly dir: string,
  ) {}

  /** Every mark, oldest first. */
  all(): RerunMark[] {
    return this.load().marks;
  }

  private load(): { marks: RerunMark[]; spends: SpentMarks[] } {
    if (this.read === undefined) {
      const events = [...(this.archiveMayHoldMarks() ? archivedRecords(this.index, this.values).events : []), ...this.index.events];
      // A mark or spend that is not one is CORRUPT_FILE naming its place (rerunMarksOf), never skipped.
      const named = (name: string) => events.filter((e) => e.name === name).map((e) => placeEvent(this.values, e, this.dir));
      this.read = { marks: rerunMarksOf(named(RERUN_EVENT)), spends: spentMarksOf(named(RERUN_SPENT_EVENT)) };
    }
    return this.read;
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

  /** Forgets what was read (the holder appended a mark or a spend). */
  reset(): void {
    this.read = undefined;
  }

  /** `entry` as the reuse decision and retention must see it: flagged `superseded` when a later mark names it, and `rerunSpent` when that mark is spent. */
  view(entry: StepEntry | undefined): StepEntry | undefined {
    if (entry === undefined) return undefined;
    const { marks, spends } = this.load();
    const flags = rerunFlags(entry.key, entry.epoch, marks, spends);
    return flags === undefined ? entry : { ...entry, ...flags };
  }
}
