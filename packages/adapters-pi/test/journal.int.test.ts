import { describe, it, expect } from "vitest";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseJournal, readJournal, rebuildFromJournal } from "../src/store/journal.js";
import { diffJson } from "../src/store/run-log/state-delta.js";
import type { JsonValue } from "../src/io/plain-json.js";
import { sampleMetadata } from "./helpers/metadata-fixtures.js";


async function tempFile(): Promise<string> {
  return path.join(await mkdtemp(path.join(tmpdir(), "phasekit-journal-")), "journal.ndjson");
}

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
    expect(await readFile(file, "utf8")).toBe(text);
  });
  it("refuses gaps in seq and prototype keys in a line", () => {
    expect(parseJournal("j", `${line(1)}\n${line(3)}\n`).ok).toBe(false);
    expect(parseJournal("j", `{"seq":1,"generation":1,"at":"t","event":"e","data":{"__proto__":{}}}\n`).ok).toBe(false);
  });
  it("keeps a complete last line that lacks its newline, and drops a torn one", async () => {
    const file = await tempFile();
    await writeFile(file, `${line(1)}\n${line(2)}`);
    const r = await readJournal(file);
    expect(r.ok && r.entries.length).toBe(2);
    expect(r.ok && r.torn).toBe(false);
    await writeFile(file, `${line(1)}\n${line(2).slice(0, 9)}`);
    const torn = await readJournal(file);
    expect(torn.ok && [torn.entries.length, torn.torn, torn.tornBytes]).toEqual([1, true, 9]);
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
  it("rebuilds the newest document of an earlier version's delta lines exactly", () => {
    const entries: Parameters<typeof rebuildFromJournal>[0][number][] = [];
    let last: unknown;
    let prev: unknown;
    const big = { notes: "n".repeat(8_000), items: Array.from({ length: 50 }, (_, i) => ({ i, v: "x".repeat(20) })) };
    for (let g = 1; g <= 40; g++) {
      const m = { ...sampleMetadata("big", g), schemaVersion: 1 as const, generation: g, state: { ...big, step: g, items: big.items.map((it, i) => (i === g % 50 ? { ...it, v: `changed-${g}` } : it)) } };
      const seq = entries.length + 1;
      if (prev === undefined) entries.push({ seq, generation: g, at: "t", event: "metadata", data: m });
      else entries.push({ seq, generation: g, at: "t", event: "metadata-delta", data: { from: g - 1, ops: diffJson(prev as JsonValue, m as unknown as JsonValue) } });
      prev = m;
      last = m;
    }
    expect(rebuildFromJournal(entries)).toEqual({ ok: true, metadata: last });
    // A delta whose base is missing rebuilds nothing past it: the newest rebuildable document wins.
    expect(rebuildFromJournal(entries.slice(1, 5))).toEqual({ ok: true, metadata: null });
  });

});
