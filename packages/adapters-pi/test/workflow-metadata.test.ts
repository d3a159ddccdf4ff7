import { describe, it, expect, beforeEach } from "vitest";
import { mkdtemp, readFile, readdir, writeFile, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import {
  parseWorkflowMetadata,
  readWorkflowMetadata,
  serializeWorkflowMetadata,
  writeWorkflowMetadata,
} from "../src/store/metadata.js";
import { sampleMetadata } from "./helpers/metadata-fixtures.js";

let dir = "";
let file = "";
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "phasekit-meta-"));
  file = path.join(dir, "workflow.json");
});

describe("workflow.json round trip", () => {
  it("reads back exactly what was written, in canonical key order with a 2-space indent, mode 0600", async () => {
    const w = await writeWorkflowMetadata(file, sampleMetadata("run-a", 1), { expectedGeneration: null });
    expect(w.ok).toBe(true);
    if (!w.ok) return;
    expect(w.metadata.generation).toBe(1);
    const r = await readWorkflowMetadata(file);
    expect(r).toEqual({ ok: true, metadata: w.metadata });
    const text = await readFile(file, "utf8");
    expect(text).toBe(serializeWorkflowMetadata(w.metadata));
    const keys = Object.keys(JSON.parse(text) as object);
    expect(keys).toEqual([...keys].sort());
    expect(text.split("\n")[1]).toMatch(/^ {2}"/);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
  });
  it("gives null for a missing file", async () => {
    expect(await readWorkflowMetadata(file)).toEqual({ ok: true, metadata: null });
  });
});

describe("compare-and-set on generation", () => {
  it("increments the generation by one per write", async () => {
    let gen: number | null = null;
    for (let i = 0; i < 5; i++) {
      const w = await writeWorkflowMetadata(file, sampleMetadata("run-a", i), { expectedGeneration: gen });
      if (!w.ok) throw w.error;
      expect(w.metadata.generation).toBe(i + 1);
      gen = w.metadata.generation;
    }
  });
  it("refuses a stale writer with STALE_GENERATION and leaves the newer file alone", async () => {
    const a = await writeWorkflowMetadata(file, sampleMetadata("run-a", 0), { expectedGeneration: null });
    const b = await writeWorkflowMetadata(file, sampleMetadata("run-a", 1), { expectedGeneration: 1 });
    expect(a.ok && b.ok).toBe(true);
    const before = await readFile(file);
    const stale = await writeWorkflowMetadata(file, sampleMetadata("run-a", 9), { expectedGeneration: 1 });
    expect(stale.ok).toBe(false);
    if (stale.ok) return;
    expect(stale.error.code).toBe("STALE_GENERATION");
    expect(stale.error.message).toContain(file);
    expect(stale.error.details.value).toBe(2);
    expect(await readFile(file)).toEqual(before);
  });
  it("refuses to create over an existing file, and to update a missing one", async () => {
    await writeWorkflowMetadata(file, sampleMetadata("run-a"), { expectedGeneration: null });
    const again = await writeWorkflowMetadata(file, sampleMetadata("run-a"), { expectedGeneration: null });
    expect(!again.ok && again.error.code).toBe("STALE_GENERATION");
    const missing = await writeWorkflowMetadata(path.join(dir, "other.json"), sampleMetadata("x"), { expectedGeneration: 3 });
    expect(!missing.ok && missing.error.code).toBe("STALE_GENERATION");
  });
  it("refuses invalid input (bad status, a Map in the state, a __proto__ key) without touching the file", async () => {
    await writeWorkflowMetadata(file, sampleMetadata("run-a"), { expectedGeneration: null });
    const before = await readFile(file);
    const bad = [
      { ...sampleMetadata("run-a"), status: "active" as never },
      { ...sampleMetadata("run-a"), state: { m: new Map() } },
      { ...sampleMetadata("run-a"), state: JSON.parse('{"__proto__": {"x": 1}}') as unknown },
      { ...sampleMetadata("run-a"), createdAt: "yesterday" },
    ];
    for (const next of bad) {
      const w = await writeWorkflowMetadata(file, next, { expectedGeneration: 1 });
      expect(w.ok).toBe(false);
      if (!w.ok) expect(["INVALID_STATE", "UNSERIALIZABLE"]).toContain(w.error.code);
    }
    expect(await readFile(file)).toEqual(before);
    expect((await readdir(dir)).sort()).toEqual(["workflow.json"]);
  });
});

describe("corrupt files", () => {
  it("names the byte offset of a JSON syntax error (in bytes, not characters)", async () => {
    await writeFile(file, '{"slug": "é", oops}');
    const r = await readWorkflowMetadata(file);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.code).toBe("CORRUPT_FILE");
    expect(r.error.details.offset).toBe(15);
    expect(r.error.message).toContain(`${file} is corrupt at byte 15`);
  });
  it("reports a newer schemaVersion as UNSUPPORTED_VERSION and a BOM / empty file as CORRUPT_FILE", () => {
    const newer = parseWorkflowMetadata(file, Buffer.from('{"schemaVersion": 2}'));
    expect(!newer.ok && newer.error.code).toBe("UNSUPPORTED_VERSION");
    const bom = parseWorkflowMetadata(file, Buffer.from("\uFEFF{}"));
    expect(!bom.ok && bom.error.message).toMatch(/byte-order mark/);
    const empty = parseWorkflowMetadata(file, Buffer.alloc(0));
    expect(!empty.ok && empty.error.message).toMatch(/empty/);
    const invalidUtf8 = parseWorkflowMetadata(file, Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x7d]));
    expect(!invalidUtf8.ok && invalidUtf8.error.details.offset).toBe(2);
  });
  it("refuses to write over a corrupt file and keeps its bytes", async () => {
    await writeFile(file, '{"schemaVersion":1,"slug":');
    const w = await writeWorkflowMetadata(file, sampleMetadata("run-a"), { expectedGeneration: null });
    expect(!w.ok && w.error.code).toBe("CORRUPT_FILE");
    expect(await readFile(file, "utf8")).toBe('{"schemaVersion":1,"slug":');
  });
});
