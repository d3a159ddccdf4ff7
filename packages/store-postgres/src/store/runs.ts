/** Metadata (compare-and-set by generation) and the journal, each write fenced by the holder's epoch. */
import { workflowError, type Result, type WorkflowError } from "@phasekit/core";
import { buildDocument, checkJournalAppend, METADATA_EVENT, validateMetadata } from "@phasekit/adapters-pi/store-kit";
import { type JournalAppend, type JournalEntry, type JournalReadResult, type ReadMetadataResult, type WorkflowMetadata, type WorkflowMetadataInput } from "@phasekit/adapters-pi";
import { fencedWrite, fenceParams, fenceSql, query, type Db, type Fence } from "../db/db.js";
import { isTerminatedConnection, lockLost, locked, storeError } from "../db/errors.js";
import { storableJson } from "../db/storable.js";

const SCOPE = "store-postgres";

/** The label a run is known by in errors (`postgres:<namespace>/<slug>`). */
export function runLabel(db: Db, slug: string): string {
  return `postgres:${db.namespace}/${slug}`;
}

/**
 * Creates the run's row if it has none yet (no holder, generation null), for a writer holding no lease only. A
 * holder's row exists while its lease does (taking the lease inserts it), so a holder never creates it: a holder
 * whose run retention removed while it stood still would bring the run back, unfenced, before its fenced
 * statement is refused.
 */
async function ensureRun(db: Db, slug: string, fence: Fence): Promise<void> {
  if (fence !== null) return;
  await query(db, "INSERT INTO phasekit_runs (namespace, slug) VALUES ($1, $2) ON CONFLICT DO NOTHING", [db.namespace, slug]);
}

/** The run's metadata, `null` when it has none; CORRUPT_FILE / UNSUPPORTED_VERSION when the row is unreadable. */
export async function readRunMetadata(db: Db, slug: string): Promise<ReadMetadataResult> {
  let row: { metadata: unknown } | undefined;
  try {
    row = (await query<{ metadata: unknown }>(db, "SELECT metadata FROM phasekit_runs WHERE namespace = $1 AND slug = $2", [db.namespace, slug])).rows[0];
  } catch (error) {
    return { ok: false, error: storeError("read", slug, "readMetadata", error) };
  }
  if (row === undefined || row.metadata === null) return { ok: true, metadata: null };
  return validateMetadata(runLabel(db, slug), row.metadata);
}

/** Compare-and-set of the metadata and its journal snapshot in one statement, fenced by `fence` (refused for a displaced lease). */
export async function writeRunMetadata(
  db: Db,
  slug: string,
  fence: Fence,
  next: WorkflowMetadataInput,
  expectedGeneration: number | null,
): Promise<Result<{ metadata: WorkflowMetadata }>> {
  const built = buildDocument(runLabel(db, slug), next, (expectedGeneration ?? 0) + 1);
  if (!built.ok) return built;
  const m = storableJson(built.metadata);
  const [e, t] = fenceParams(fence);
  const entry = { generation: m.generation, at: m.updatedAt, event: METADATA_EVENT, data: m };
  // A compare-and-set is sent again after a cut connection only after looking: our very document in place means
  // the first try committed; otherwise the old generation is still expected and a second try is safe.
  const write = async (): Promise<true | undefined> => {
    for (let tries = 0; ; tries++) {
      try {
        const r = await query(
          db,
          `WITH upd AS (
             UPDATE phasekit_runs r SET generation = $5, metadata = $6, status = $7, updated_at = $8, written_at = now(), journal_seq = r.journal_seq + 1
             WHERE r.namespace = $1 AND r.slug = $2 AND r.generation IS NOT DISTINCT FROM $9::bigint AND ${fenceSql("$3", "$4")}
             RETURNING r.journal_seq, r.epoch)
           INSERT INTO phasekit_journal (namespace, slug, seq, entry, epoch)
           SELECT $1, $2, journal_seq, jsonb_build_object('seq', journal_seq) || $10::jsonb, epoch FROM upd RETURNING seq`,
          [db.namespace, slug, e, t, m.generation, m, m.status, m.updatedAt, expectedGeneration, entry],
          false,
        );
        return r.rowCount === 1 ? true : undefined;
      } catch (error) {
        if (tries >= 1 || !isTerminatedConnection(error)) throw error;
        if (await landed(db, slug, m)) return true;
      }
    }
  };
  try {
    if (expectedGeneration === null) await ensureRun(db, slug, fence);
    if ((await fencedWrite(fence, write)) === true) return { ok: true, metadata: m };
    return { ok: false, error: await whyRefused(db, slug, fence, "writeMetadata", expectedGeneration) };
  } catch (error) {
    return { ok: false, error: storeError("write", slug, "writeMetadata", error) };
  }
}

/** True when the run row holds exactly document `m` (a write whose reply was lost did commit). */
async function landed(db: Db, slug: string, m: WorkflowMetadata): Promise<boolean> {
  const r = await query<{ same: boolean }>(db, "SELECT metadata = $3::jsonb AS same FROM phasekit_runs WHERE namespace = $1 AND slug = $2", [db.namespace, slug, m]);
  return r.rows[0]?.same === true;
}

/** The run's journal in `seq` order past seq `after` (a database has no torn tail). */
export async function readRunJournal(db: Db, slug: string, after = 0): Promise<JournalReadResult> {
  try {
    const r = await query<{ entry: JournalEntry }>(db, "SELECT entry FROM phasekit_journal WHERE namespace = $1 AND slug = $2 AND seq > $3 ORDER BY seq", [db.namespace, slug, after]);
    return { ok: true, entries: r.rows.map((x) => x.entry), torn: false, tornBytes: 0 };
  } catch (error) {
    return { ok: false, error: storeError("read", slug, "readJournal", error) };
  }
}

/** Appends a non-snapshot event with the next `seq`, fenced like every write. */
export async function appendRunJournal(db: Db, slug: string, fence: Fence, entry: JournalAppend): Promise<Result<{ entry: JournalEntry }>> {
  // The fs store's check (schema, reserved events): nothing it refuses is appended here.
  const checked = checkJournalAppend(slug, entry);
  if (!checked.ok) return checked;
  const [e, t] = fenceParams(fence);
  const stored = storableJson(checked.entry);
  try {
    await ensureRun(db, slug, fence);
    // Not sent again after a cut connection: a second try would append the event twice.
    const row = await fencedWrite(fence, async () => {
      const r = await query<{ entry: JournalEntry }>(
        db,
        `WITH upd AS (
           UPDATE phasekit_runs r SET journal_seq = r.journal_seq + 1
           WHERE r.namespace = $1 AND r.slug = $2 AND ${fenceSql("$3", "$4")} RETURNING r.journal_seq, r.epoch)
         INSERT INTO phasekit_journal (namespace, slug, seq, entry, epoch)
         SELECT $1, $2, journal_seq, jsonb_build_object('seq', journal_seq) || $5::jsonb, epoch FROM upd RETURNING entry`,
        [db.namespace, slug, e, t, stored],
        false,
      );
      return r.rows[0];
    });
    if (row !== undefined) return { ok: true, entry: row.entry };
    return { ok: false, error: await whyRefused(db, slug, fence, "appendJournal", undefined) };
  } catch (error) {
    return { ok: false, error: storeError("write", slug, "appendJournal", error) };
  }
}

/** After a refused write: which rule refused it (stale generation, displaced epoch, another live holder). */
export async function whyRefused(db: Db, slug: string, mine: Fence, what: string, expectedGeneration: number | null | undefined): Promise<WorkflowError> {
  const r = await query<{ generation: string | null; epoch: string; holder: string | null; holder_owner: unknown; live: boolean }>(
    db,
    "SELECT generation, epoch, holder, holder_owner, (holder IS NOT NULL AND lease_until >= now()) AS live FROM phasekit_runs WHERE namespace = $1 AND slug = $2",
    [db.namespace, slug],
  );
  const row = r.rows[0];
  // A displaced holder hears that first: a stale generation is only a symptom of the new holder's writes.
  if (mine !== null && (row === undefined || Number(row.epoch) !== mine.epoch || row.holder !== mine.token)) return lockLost(slug, mine.epoch, what);
  const found = row?.generation == null ? null : Number(row.generation);
  if (expectedGeneration !== undefined && found !== expectedGeneration) {
    return workflowError(SCOPE, "STALE_GENERATION", `run ${slug}: ${what} expected generation ${String(expectedGeneration)}, found ${String(found)}.`, {
      field: "generation",
      value: found,
      hint: "re-read the metadata and retry on top of it",
    });
  }
  if (mine !== null) return lockLost(slug, mine.epoch, what);
  return locked(slug, row?.live ? row.holder_owner : "a holder");
}
