/**
 * Properties of the definition loader as a parser: it never throws on any file content, and a problem the
 * compiler finds in a phase (a duplicate id) points at the very line of that phase file where the id is written.
 */
import fc from "fast-check";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { loadDefinitionFolders } from "../../src/definitions/folders.js";

function withFolder<T>(fn: (dir: string) => T): T {
  const dir = mkdtempSync(path.join(tmpdir(), "pk-prop-"));
  try {
    return fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe("definition loader properties", () => {
  it("never throws, whatever workflow.yaml and the phase file hold; every problem names a file and a line ≥ 1", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 300 }), fc.string({ unit: "binary", maxLength: 300 }), (yaml, md) =>
        withFolder((dir) => {
          writeFileSync(path.join(dir, "workflow.yaml"), yaml.includes("phases") ? yaml : `${yaml}\nphases:\n  - a.md\n`);
          writeFileSync(path.join(dir, "a.md"), md);
          const r = loadDefinitionFolders([dir]);
          for (const p of r.problems) {
            expect(p.file.length).toBeGreaterThan(0);
            expect(p.line).toBeGreaterThanOrEqual(1);
          }
        }),
      ),
      { numRuns: process.env["CI"] ? 40 : 150 },
    );
  });

  it("a duplicate phase id is reported at the line of the second phase file that writes it", () => {
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 6 }), fc.nat(), fc.nat(), fc.integer({ min: 0, max: 4 }), (n, a, b, padding) =>
        withFolder((dir) => {
          const first = a % n;
          const second = (first + 1 + (b % (n - 1))) % n;
          const wf = path.join(dir, "wf");
          mkdirSync(wf);
          writeFileSync(path.join(wf, "workflow.yaml"), `name: "W"\nphases:\n${Array.from({ length: n }, (_, i) => `  - p${i}.md\n`).join("")}`);
          for (let i = 0; i < n; i++) {
            const id = i === second ? `p${first}` : `p${i}`;
            // Extra fields before the id move its line around.
            writeFileSync(path.join(wf, `p${i}.md`), `---\n${"# padding\n".repeat(i === second ? padding : 0)}name: P${i}\nid: ${id}\n---\nDo it.\n`);
          }
          const r = loadDefinitionFolders([wf]);
          const dup = r.problems.find((p) => p.code === "DUPLICATE_PHASE_ID");
          expect(dup).toBeDefined();
          const later = Math.max(first, second);
          expect(path.basename(dup?.file ?? "")).toBe(`p${later}.md`);
          const lines = readFileSync(dup?.file ?? "", "utf8").split("\n");
          expect(lines[(dup?.line ?? 0) - 1]).toMatch(/^id: /);
        }),
      ),
      { numRuns: process.env["CI"] ? 20 : 60 },
    );
  });
});
