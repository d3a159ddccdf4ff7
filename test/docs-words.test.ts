/**
 * The documentation speaks to someone who has only the docs and the code: no word that needs this project's own
 * history to understand (its planning notes, issue numbers, work sessions). Upstream issues of other projects
 * (`upstream issue #121`) are fine: a reader can follow them.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { documentationFiles } from "./docs-snippets/extract.js";

const root = fileURLToPath(new URL("..", import.meta.url));
const HISTORY = /\bseed(?:'s| \d+)?\b|\bdesign card\b|(?<!upstream )\bissue #?\d+\b|\bsession[- ]\d+\b|\bthe brief\b/gi;

/** Every `file:line: word` where a history word appears. */
function historyWords(files: readonly string[]): string[] {
  return files.flatMap((f) =>
    readFileSync(path.join(root, f), "utf8")
      .split("\n")
      .flatMap((line, i) => [...line.matchAll(HISTORY)].map((m) => `${f}:${i + 1}: ${m[0]}`)),
  );
}

describe("documentation words", () => {
  it("README.md, docs/ and the package READMEs use no word that needs this project's history", () => {
    expect(historyWords(documentationFiles(root))).toEqual([]);
  });

  it("the pattern finds the words it is for, and leaves ordinary ones", () => {
    const probe = "the seed's bug; seed 003; the design card; issue 11; session-5; upstream issue #121; seeded; reissue 3";
    expect([...probe.matchAll(HISTORY)].map((m) => m[0])).toEqual(["seed's", "seed 003", "design card", "issue 11", "session-5"]);
  });
});
