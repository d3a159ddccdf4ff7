/**
 * The journal is a rendering of the run's history (docs/decisions.md D17): no journal.ndjson is written, its
 * entries survive compaction with the same seq, a folder of an earlier version keeps its file (read first,
 * never changed) and shows each generation once, and every write of a run nobody holds goes into the history
 * under a lock taken for it.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { createFsPlanStore } from "../src/store/plan-store.js";
import { rebuildFromJournal, type JournalEntry } from "../src/store/journal.js";
import { readRunLog } from "../src/store/run-log/reader.js";
import { diffJson } from "../src/store/run-log/state-delta.js";
import type { JsonValue } from "../src/io/plain-json.js";
import { acquisition, journalEntries } from "./helpers/journal-acquisitions.js";
import { sampleMetadata } from "./helpers/metadata-fixtures.js";
import { useTempRepos } from "./helpers/temp-repos.js";

const repo = useTempRepos("pk-journal-history-");
const at = "2026-01-02T03:04:05.000Z";

describe("the journal rendered from the history", () => {
  it("keeps every generation and event, in order and with the same seq, through the folds of many acquisitions; no journal file is written", async () => {
    const root = repo();
    const store = createFsPlanStore({ repoRoot: root });
    const seqs: number[] = [];
    const before: JournalEntry[][] = [];
    for (let i = 0; i < 12; i++) {
      seqs.push(await acquisition(store, "r", i));
      before.push(await journalEntries(store, "r"));
    }
    const runDir = path.join(root, "ai_plan", "r");
    expect(existsSync(path.join(runDir, "journal.ndjson"))).toBe(false);
    // The history was folded (a snapshot, few files), yet the journal lost nothing.
    const files = readdirSync(path.join(runDir, "runlog"));
    expect(files.some((f) => f.startsWith("snap-")), files.join(",")).toBe(true);
    expect(files.length).toBeLessThanOrEqual(8);
    const entries = await journalEntries(store, "r");
    expect(entries.map((e) => e.seq)).toEqual(Array.from({ length: 24 }, (_, k) => k + 1));
    expect(entries.map((e) => `${e.event}@${e.generation}`)).toEqual(Array.from({ length: 12 }, (_, i) => [`metadata@${i + 1}`, `moved-${i}@${i + 1}`]).flat());
    // The seq an append returned is the entry's place, before and after every fold.
    expect(seqs).toEqual(Array.from({ length: 12 }, (_, i) => 2 * i + 2));
    for (const seen of before) expect(entries.slice(0, seen.length)).toEqual(seen);
    // Every metadata line is the whole document of its generation: the latest one rebuilds.
    const rebuilt = rebuildFromJournal(entries);
    expect(rebuilt.ok && rebuilt.metadata).toMatchObject({ generation: 12, state: { step: 11 } });
    await store.close();
  });

  it("past 64 generations the older ones live in the snapshot's archive: a claim reads one line for them, and the journal and commits are whole", async () => {
    const root = repo();
    const store = createFsPlanStore({ repoRoot: root });
    const before: JournalEntry[][] = [];
    for (let i = 0; i < 100; i++) {
      await acquisition(store, "long", i);
      if (i % 37 === 0) before.push(await journalEntries(store, "long"));
      if (i === 1) {
        // A commit intent early in the history: its event is archived with the generations around it.
        const l = await store.lock("long", { owner: { tool: "committer" } });
        if (!l.ok) throw l.error;
        const cps = await (l.lock.store ?? store).checkpoints("long", { now: () => new Date() });
        await cps.recordCommitIntent({ id: "c1", message: "early", files: [] });
        await l.lock.release();
      }
    }
    const runDir = path.join(root, "ai_plan", "long");
    const snaps = readdirSync(path.join(runDir, "runlog")).filter((f) => f.startsWith("snap-"));
    expect(snaps.length).toBeGreaterThan(0);
    const snap = readFileSync(path.join(runDir, "runlog", snaps[snaps.length - 1] as string));
    const indexSection = snap.subarray(0, (JSON.parse(snap.subarray(0, snap.indexOf(10)).toString()) as { idx: number }).idx).toString();
    const lines = indexSection.split("\n");
    expect(lines.filter((l) => l.startsWith('{"t":"arch"')).length).toBe(1);
    // What a claim parses: the latest full state and the deltas after it (≤ 64), not 100 generations.
    expect(lines.filter((l) => l.startsWith('{"t":"state"')).length).toBeLessThanOrEqual(65);
    const entries = await journalEntries(store, "long");
    // seq only grows: the archived commit intent keeps its place (a gap), it is no journal entry.
    expect(entries).toHaveLength(200);
    expect(entries.map((e) => e.seq)).toEqual(Array.from({ length: 201 }, (_, k) => k + 1).filter((k) => k !== 5));
    expect(entries.filter((e) => e.event === "metadata").map((e) => e.generation)).toEqual(Array.from({ length: 100 }, (_, k) => k + 1));
    for (const seen of before) expect(entries.slice(0, seen.length)).toEqual(seen);
    expect(rebuildFromJournal(entries)).toMatchObject({ ok: true, metadata: { generation: 100, state: { step: 99 } } });
    // The next append numbers on from the archive, and a fresh store object agrees; the archived commit is there.
    const again = createFsPlanStore({ repoRoot: root });
    expect(await acquisition(again, "long", 100)).toBe(203);
    expect((await journalEntries(again, "long")).length).toBe(202);
    const reader = await again.checkpoints("long", { now: () => new Date() });
    expect((await reader.commits()).map((c) => c.id)).toEqual(["c1"]);
    await again.close();
    await store.close();
  });

  it("a damaged archive is CORRUPT_FILE naming the snapshot when the journal is read, and does not stop the run; an archive line planted in a segment is refused", async () => {
    const root = repo();
    const store = createFsPlanStore({ repoRoot: root });
    for (let i = 0; i < 70; i++) await acquisition(store, "dmg", i);
    const runlog = path.join(root, "ai_plan", "dmg", "runlog");
    const snapName = readdirSync(runlog).filter((f) => f.startsWith("snap-")).sort().pop() as string;
    const snapFile = path.join(runlog, snapName);
    const bytes = readFileSync(snapFile);
    const arch = bytes.toString("latin1").split("\n").find((l) => l.startsWith('{"t":"arch"'));
    const { po } = JSON.parse(arch as string) as { po: number };
    bytes[po] = 0x58; // "X": the archive's first header is no longer JSON
    writeFileSync(snapFile, bytes);
    const j = await store.readJournal("dmg");
    expect(j.ok ? "read" : `${j.error.code} ${j.error.message}`).toMatch(new RegExp(`^CORRUPT_FILE .*${snapName}`));
    // The run goes on: a claim reads the archive's header only.
    await acquisition(store, "dmg", 70);
    expect((await store.readMetadata("dmg")).ok).toBe(true);
    // A segment holding an archive line (something only a compaction writes into a snapshot) is refused.
    const seg = path.join(runlog, readdirSync(runlog).filter((f) => f.endsWith(".seg")).sort().pop() as string);
    const epoch = Number(path.basename(seg, ".seg"));
    writeFileSync(seg, `${readFileSync(seg, "utf8")}{"t":"arch","e":${epoch},"n":1}\t{"t":"event","e":1,"name":"x"}\n`);
    const after = await store.readJournal("dmg");
    expect(after.ok ? "read" : after.error.code).toBe("CORRUPT_FILE");
    await store.close();
  });

  it("a folder of an earlier version: its journal.ndjson is read first and never changed, and a generation in both shows once", async () => {
    const root = repo();
    const store = createFsPlanStore({ repoRoot: root });
    await acquisition(store, "old", 0);
    await acquisition(store, "old", 1);
    await store.close();
    // What an earlier version left: the same two generations in its own journal file, and an event.
    const runDir = path.join(root, "ai_plan", "old");
    const meta = (g: number) => ({ ...sampleMetadata("old", g - 1, 3000), generation: g, schemaVersion: 1 });
    const legacy = [
      { seq: 1, generation: 1, at, event: "metadata", data: meta(1) },
      { seq: 2, generation: 1, at, event: "step-reused", data: { stepId: "plan" } },
      // A later generation as a delta line, as earlier versions wrote large documents.
      { seq: 3, generation: 2, at, event: "metadata-delta", data: { from: 1, ops: diffJson(meta(1) as unknown as JsonValue, meta(2) as unknown as JsonValue) } },
    ];
    const text = legacy.map((l) => `${JSON.stringify(l)}\n`).join("");
    writeFileSync(path.join(runDir, "journal.ndjson"), text);

    const again = createFsPlanStore({ repoRoot: root });
    await acquisition(again, "old", 2);
    const entries = await journalEntries(again, "old");
    await again.close();
    expect(readFileSync(path.join(runDir, "journal.ndjson"), "utf8")).toBe(text);
    expect(entries.slice(0, 3).map((e) => e.seq)).toEqual([1, 2, 3]);
    expect(entries.map((e) => `${e.event}@${e.generation}`)).toEqual(["metadata@1", "step-reused@1", "metadata-delta@2", "moved-0@1", "moved-1@2", "metadata@3", "moved-2@3"]);
    expect(rebuildFromJournal(entries)).toMatchObject({ ok: true, metadata: { generation: 3 } });
    const seqs = entries.map((e) => e.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(new Set(seqs).size).toBe(seqs.length);
  });

  it("a write to a run nobody holds goes into the history under a lock taken for it, and leaves no lock behind", async () => {
    const root = repo();
    const store = createFsPlanStore({ repoRoot: root });
    expect(await store.writeMetadata("free", sampleMetadata("free"), null)).toMatchObject({ ok: true, metadata: { generation: 1 } });
    expect(await store.appendJournal("free", { generation: 1, at, event: "noted" })).toMatchObject({ ok: true, entry: { seq: 2 } });
    expect(await store.writeMetadata("free", sampleMetadata("free", 1), 1)).toMatchObject({ ok: true, metadata: { generation: 2 } });
    const runDir = path.join(root, "ai_plan", "free");
    expect(existsSync(path.join(runDir, ".lock"))).toBe(false);
    const view = await readRunLog(runDir);
    expect(view?.state()).toMatchObject({ generation: 2, currentStepId: "step:1" });
    view?.close();
    expect((await journalEntries(store, "free")).map((e) => `${e.seq}:${e.event}@${e.generation}`)).toEqual(["1:metadata@1", "2:noted@1", "3:metadata@2"]);
    // A malformed entry is refused naming the field, before anything is written.
    const bad = await store.appendJournal("free", { generation: -1, at, event: "x" });
    expect(bad.ok ? "accepted" : `${bad.error.code}:${bad.error.details.field}`).toBe("INVALID_OPTIONS:generation");
    await store.close();
  });
});
