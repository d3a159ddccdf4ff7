import { describe, it, expect, beforeAll } from "vitest";
import fc from "fast-check";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { readWorkflowMetadata, serializeWorkflowMetadata, writeWorkflowMetadata } from "../src/store/metadata.js";
import type { WorkflowMetadata } from "../src/store/metadata-schema.js";
import { sampleMetadata } from "./helpers/metadata-fixtures.js";

const RUNS = process.env.CI === "true" ? 10_000 : 1_000;
let file = "";
beforeAll(async () => {
  file = path.join(await mkdtemp(path.join(tmpdir(), "phasekit-hostile-")), "workflow.json");
});

const valid: WorkflowMetadata = { ...sampleMetadata("hostile", 3), schemaVersion: 1, generation: 7 };
const validText = serializeWorkflowMetadata(valid);
const FIELDS = Object.keys(valid);

const prototypeKey = fc.constantFrom("__proto__", "constructor", "prototype");
const odd = fc.oneof(fc.constant(null), fc.integer(), fc.double(), fc.boolean(), fc.string(), fc.constant([]), fc.constant({}));
const deep = fc.integer({ min: 1, max: 20_000 }).map((n) => "[".repeat(n) + "]".repeat(n));

/** Hostile documents, each as the exact bytes placed on disk. */
const hostile: fc.Arbitrary<Uint8Array> = fc.oneof(
  fc.integer({ min: 0, max: validText.length - 1 }).map((n) => Buffer.from(validText.slice(0, n))),
  fc.constant(Buffer.from(`\uFEFF${validText}`)),
  fc.uint8Array({ maxLength: 300 }),
  fc.json().map((j) => Buffer.from(j)),
  fc.string({ unit: "binary", maxLength: 200 }).map((s) => Buffer.from(s)),
  deep.map((s) => Buffer.from(s)),
  deep.map((s) => Buffer.from(JSON.stringify({ ...valid, state: "$" }).replace('"$"', s))),
  fc.tuple(prototypeKey, fc.constantFrom("top", "state", "deep")).map(([key, where]) => {
    const inject = `{"${key}": {"polluted": true}}`;
    if (where === "top") return Buffer.from(validText.replace("{", `{"${key}": 1, `));
    if (where === "state") return Buffer.from(JSON.stringify({ ...valid, state: "$" }).replace('"$"', inject));
    return Buffer.from(JSON.stringify({ ...valid, state: { a: [1, "$"] } }).replace('"$"', inject));
  }),
  fc.tuple(fc.constantFrom(...FIELDS), odd).map(([k, v]) => Buffer.from(JSON.stringify({ ...valid, [k]: v }))),
  fc.constantFrom(...FIELDS).map((k) => {
    const copy: Record<string, unknown> = { ...valid };
    delete copy[k];
    return Buffer.from(JSON.stringify(copy));
  }),
  fc.tuple(fc.integer({ min: 2, max: 1e6 }), fc.boolean()).map(([v, other]) =>
    Buffer.from(JSON.stringify(other ? { schemaVersion: v } : { ...valid, schemaVersion: v })),
  ),
  fc.constantFrom("toString", "hasOwnProperty", "valueOf", "__defineGetter__", "isPrototypeOf").map((k) => Buffer.from(JSON.stringify({ ...valid, [k]: 1 }))),
  fc.constant(Buffer.from(validText)),
);

describe("workflow.json against hostile files", () => {
  it(`${RUNS} cases: every load is a typed error or valid metadata, nothing throws, nothing is overwritten`, async () => {
    let corrupt = 0;
    await fc.assert(
      fc.asyncProperty(hostile, async (bytes) => {
        await writeFile(file, bytes);
        const r = await readWorkflowMetadata(file);
        if (r.ok) {
          expect(r.metadata).not.toBeNull();
          expect(r.metadata?.generation).toBeGreaterThanOrEqual(1);
        } else {
          corrupt++;
          expect(["CORRUPT_FILE", "UNSUPPORTED_VERSION"]).toContain(r.error.code);
          expect(r.error.message).toContain(file);
          expect(r.error.details.file).toBe(file);
          // A refused write still costs a temp-file fsync (the check runs beside the write), so sample 1 in 10.
          if (corrupt % 10 === 1) {
            const w = await writeWorkflowMetadata(file, sampleMetadata("hostile", 9), { expectedGeneration: null });
            expect(w.ok).toBe(false);
            if (!w.ok) expect(w.error.code).toBe(r.error.code);
          }
        }
        expect(Buffer.compare(await readFile(file), Buffer.from(bytes))).toBe(0);
      }),
      { numRuns: RUNS },
    );
    expect(corrupt).toBeGreaterThan(RUNS / 2);
  }, 300_000);

  it("prototype keys never reach the metadata object, at any depth", async () => {
    for (const key of ["__proto__", "constructor", "prototype"]) {
      await writeFile(file, JSON.stringify({ ...valid, state: { x: "$" } }).replace('"$"', `{"${key}": {"polluted": true}}`));
      const r = await readWorkflowMetadata(file);
      expect(!r.ok && r.error.code).toBe("CORRUPT_FILE");
      expect(!r.ok && r.error.details.field).toBe(key);
    }
    expect(({} as { polluted?: boolean }).polluted).toBeUndefined();
  });
});
