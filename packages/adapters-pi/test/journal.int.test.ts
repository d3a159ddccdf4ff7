import { describe, it, expect } from "vitest";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { openJournal, parseJournal, readJournal, rebuildFromJournal } from "../src/store/journal.js";
import { sampleMetadata } from "./helpers/metadata-fixtures.js";
import { spawnChild } from "./helpers/spawn-child.js";

const appender = fileURLToPath(new URL("./helpers/journal-appender.mjs", import.meta.url));

async function tempFile(): Promise<string> {
  return path.join(await mkdtemp(path.join(tmpdir(), "phasekit-journal-")), "journal.ndjson");
}

describe("journal written by a SIGKILLed appender", () => {
  it("ignores the torn last line, rebuilds the latest metadata, and appends cleanly after reopening", async () => {
    const file = await tempFile();
    const child = spawnChild(appender, [file, "5", "tear"]);
    await child.waitFor(/^torn$/);
    child.proc.kill("SIGKILL");
    expect((await child.exited).signal).toBe("SIGKILL");

    const read = await readJournal(file);
    if (!read.ok) throw read.error;
    expect(read.torn).toBe(true);
    expect(read.entries.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5]);
    const rebuilt = rebuildFromJournal(read.entries, file);
    expect(rebuilt.ok && rebuilt.metadata?.generation).toBe(5);
    expect(rebuilt.ok && rebuilt.metadata?.state).toEqual({ i: 5 });

    const writer = await openJournal(file);
    const next = await writer.append({ generation: 5, at: "2026-01-02T00:00:00.000Z", event: "paused" });
    await writer.close();
    expect(next.seq).toBe(6);
    const again = await readJournal(file);
    if (!again.ok) throw again.error;
    expect(again.torn).toBe(false);
    expect(again.entries.map((e) => e.event)).toEqual(["metadata", "metadata", "metadata", "metadata", "metadata", "paused"]);
  });

  it("keeps every acknowledged entry when killed at a random moment mid-stream", async () => {
    for (let round = 0; round < 3; round++) {
      const file = await tempFile();
      const child = spawnChild(appender, [file, "400"]);
      await child.waitFor(/^ack 1$/);
      await new Promise((r) => setTimeout(r, Math.random() * 40));
      child.proc.kill("SIGKILL");
      await child.exited;
      const acked = child.lines.filter((l) => l.startsWith("ack ")).length;
      const read = await readJournal(file);
      if (!read.ok) throw read.error;
      expect(read.entries.length).toBeGreaterThanOrEqual(acked);
    }
  });
});

describe("journal parsing", () => {
  const line = (seq: number, event = "e") => JSON.stringify({ seq, generation: 1, at: "t", event });
  it("reports a damaged middle line as CORRUPT_FILE naming the line, and never rewrites the file", async () => {
    const file = await tempFile();
    const text = `${line(1)}\n{"seq":2,"gen\n${line(3)}\n`;
    await writeFile(file, text);
    const r = await readJournal(file);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.code).toBe("CORRUPT_FILE");
    expect(r.error.message).toContain(`${file} line 2`);
    await expect(openJournal(file)).rejects.toMatchObject({ code: "CORRUPT_FILE" });
    expect(await readFile(file, "utf8")).toBe(text);
  });
  it("refuses gaps in seq and prototype keys in a line", () => {
    expect(parseJournal("j", `${line(1)}\n${line(3)}\n`).ok).toBe(false);
    expect(parseJournal("j", `{"seq":1,"generation":1,"at":"t","event":"e","data":{"__proto__":{}}}\n`).ok).toBe(false);
  });
  it("keeps a complete last line that lacks its newline, and adds the newline before the next append", async () => {
    const file = await tempFile();
    await writeFile(file, `${line(1)}\n${line(2)}`);
    const r = await readJournal(file);
    expect(r.ok && r.entries.length).toBe(2);
    expect(r.ok && r.torn).toBe(false);
    const w = await openJournal(file);
    await w.append({ generation: 1, at: "t", event: "x" });
    await w.close();
    const again = await readJournal(file);
    expect(again.ok && again.entries.map((e) => e.seq)).toEqual([1, 2, 3]);
  });
  it("gives null from rebuild when no snapshot was journaled, and an error for a damaged snapshot", () => {
    expect(rebuildFromJournal([{ seq: 1, generation: 0, at: "t", event: "started" }])).toEqual({ ok: true, metadata: null });
    const bad = rebuildFromJournal([{ seq: 1, generation: 1, at: "t", event: "metadata", data: { slug: 3 } }]);
    expect(!bad.ok && bad.error.code).toBe("CORRUPT_FILE");
  });
  it("rebuilds from the highest generation, not the last line: a displaced holder's late line never wins", async () => {
    const doc = (generation: number, status: string) => ({ ...sampleMetadata("late", generation), status, schemaVersion: 1, generation });
    const entries = [
      { seq: 1, generation: 1, at: "t", event: "metadata", data: doc(1, "running") },
      { seq: 2, generation: 2, at: "t", event: "metadata", data: doc(2, "running") },
      { seq: 3, generation: 3, at: "t", event: "metadata", data: doc(3, "completed") },
      // Acknowledged at generation 2 by holder A before B took over, journaled after B had finished.
      { seq: 4, generation: 2, at: "t", event: "metadata", data: doc(2, "running") },
    ];
    expect(rebuildFromJournal(entries)).toMatchObject({ ok: true, metadata: { generation: 3, status: "completed" } });
  });
  it("journals a large document's next generations as deltas and rebuilds the newest exactly", async () => {
    const { metadataEntry } = await import("../src/store/journal.js");
    let prev: Parameters<typeof metadataEntry>[1];
    const entries: Parameters<typeof rebuildFromJournal>[0][number][] = [];
    let last: unknown;
    const big = { notes: "n".repeat(8_000), items: Array.from({ length: 50 }, (_, i) => ({ i, v: "x".repeat(20) })) };
    for (let g = 1; g <= 300; g++) {
      const m = { ...sampleMetadata("big", g), schemaVersion: 1 as const, generation: g, state: { ...big, step: g, items: big.items.map((it, i) => (i === g % 50 ? { ...it, v: `changed-${g}` } : it)) } };
      const { entry, journaled } = metadataEntry(m, prev);
      prev = journaled;
      entries.push({ ...entry, seq: entries.length + 1 });
      last = m;
    }
    const kinds = entries.map((e) => e.event);
    expect(kinds.filter((k) => k === "metadata").length).toBe(2); // the first, and a full one after 256 deltas
    const bytes = entries.reduce((n, e) => n + JSON.stringify(e).length, 0);
    expect(bytes).toBeLessThan(300 * 8_000 / 10);
    expect(rebuildFromJournal(entries)).toEqual({ ok: true, metadata: last });
    // A delta whose base is missing rebuilds nothing past it: the newest rebuildable document wins.
    expect(rebuildFromJournal(entries.slice(1, 5))).toEqual({ ok: true, metadata: null });
  });
  it("serializes concurrent appends in one process into consecutive seqs", async () => {
    const file = await tempFile();
    const w = await openJournal(file);
    const all = await Promise.all(Array.from({ length: 20 }, (_, i) => w.append({ generation: i, at: "t", event: "e" })));
    await w.close();
    expect(all.map((e) => e.seq)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    const r = await readJournal(file);
    expect(r.ok && r.entries.length).toBe(20);
  });
});
