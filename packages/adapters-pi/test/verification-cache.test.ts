import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { mkdtemp, readFile, readdir, rm, writeFile, mkdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { isWorkflowError } from "@phasekit/core";
import {
  createPersistentVerificationCache,
  createRunVerificationCache,
  createVerificationCache,
  verificationCacheFileSchema,
} from "../src/verification/cache.js";

let base = "";
let seq = 0;
beforeAll(async () => {
  base = await mkdtemp(path.join(tmpdir(), "phasekit-vcache-"));
});
afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});
const freshFile = () => path.join(base, `d${++seq}`, "verification-cache.json");
const rec = (key: string) => ({ key, command: "npm test", tool: "t", phase: "p" });

function warnings() {
  const seen: string[] = [];
  return { reporter: { warning: (t: string) => void seen.push(t) }, seen };
}

describe("run cache", () => {
  it("remembers recorded keys and stays bounded, dropping the oldest", async () => {
    const c = createRunVerificationCache({ maxEntries: 3 });
    expect(await c.has("a")).toBe(false);
    for (const k of ["a", "b", "c", "a", "d"]) await c.record(rec(k));
    expect((await c.entries()).map((e) => e.key)).toEqual(["c", "a", "d"]);
    expect(await c.has("b")).toBe(false);
    expect(await c.has("a")).toBe(true);
  });

  it("off remembers nothing", async () => {
    const c = createVerificationCache("off");
    await c.record(rec("a"));
    expect(await c.has("a")).toBe(false);
  });
});

describe("persistent cache", () => {
  it("survives a new instance, writes a valid versioned file and leaves no temp file", async () => {
    const file = freshFile();
    let t = 100;
    const a = createPersistentVerificationCache({ file, now: () => t++ });
    await a.record(rec("k1"));
    await a.record(rec("k2"));
    const b = createPersistentVerificationCache({ file });
    expect(await b.has("k1")).toBe(true);
    expect(await b.has("k3")).toBe(false);
    const doc = verificationCacheFileSchema.parse(JSON.parse(await readFile(file, "utf8")));
    expect(doc.entries).toEqual([
      { ...rec("k1"), recordedAt: 100 },
      { ...rec("k2"), recordedAt: 101 },
    ]);
    expect(await readdir(path.dirname(file))).toEqual(["verification-cache.json"]);
  });

  it("is bounded to maxEntries across instances", async () => {
    const file = freshFile();
    for (let i = 0; i < 12; i++) await createPersistentVerificationCache({ file, maxEntries: 5 }).record(rec(`k${i}`));
    const entries = await createPersistentVerificationCache({ file }).entries();
    expect(entries.map((e) => e.key)).toEqual(["k7", "k8", "k9", "k10", "k11"]);
  });

  it("concurrent records of one instance all land", async () => {
    const file = freshFile();
    const c = createPersistentVerificationCache({ file });
    await Promise.all(Array.from({ length: 20 }, (_, i) => c.record(rec(`k${i}`))));
    expect((await c.entries()).length).toBe(20);
  });

  it.each([
    ["not JSON", "{oops"],
    ["invalid: entries: expected an array", JSON.stringify({ schemaVersion: 1, entries: "x" })],
    ["invalid: schemaVersion: expected 1, got 2", JSON.stringify({ schemaVersion: 2, entries: [] })],
  ])("a corrupt file (%s) is read as empty with one warning, then replaced atomically", async (reason, content) => {
    const file = freshFile();
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, content);
    const { reporter, seen } = warnings();
    const c = createPersistentVerificationCache({ file, reporter });
    expect(await c.has("k")).toBe(false);
    expect(await c.has("k")).toBe(false);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toContain(reason);
    await c.record(rec("k"));
    expect(await createPersistentVerificationCache({ file }).has("k")).toBe(true);
    expect(seen).toHaveLength(1);
  });

  it("checks its options at once", () => {
    const bad = [() => createPersistentVerificationCache({ file: "relative.json" }), () => createRunVerificationCache({ maxEntries: 0 }), () => createVerificationCache("persistent")];
    for (const f of bad) {
      let caught: unknown;
      try {
        f();
      } catch (e) {
        caught = e;
      }
      expect(isWorkflowError(caught, "INVALID_OPTIONS")).toBe(true);
    }
  });
});
