/**
 * Every ```ts / ```typescript block of README.md, docs/ and packages/*\/README.md compiles with the repository's
 * strict options (plus exactOptionalPropertyTypes) against the packages' built declarations, in one program,
 * and every block not marked `<!-- snippet: typecheck-only -->` runs. So the documentation cannot drift from
 * the code. The marker syntax is in docs-snippets/extract.ts.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { documentationFiles, extractSnippets, type Snippet } from "./docs-snippets/extract.js";
import { typecheckSnippets, writeSnippets } from "./docs-snippets/typecheck.js";

const root = fileURLToPath(new URL("..", import.meta.url));
const files = documentationFiles(root);
const extracted = files.map((f) => extractSnippets(readFileSync(path.join(root, f), "utf8"), f));
const snippets = extracted.flatMap((e) => (e.ok ? e.snippets : []));
// Inside the repository, so the snippets resolve @phasekit/* and @types/node as a consumer's code does.
mkdirSync(path.join(root, ".tmp"), { recursive: true });
const dir = mkdtempSync(path.join(root, ".tmp", "docs-snippets-"));
const written = writeSnippets(snippets, dir);
const runnable = written.filter((w) => w.snippet.mode === "run");

afterAll(() => rmSync(dir, { recursive: true, force: true }));

const label = (s: Snippet): string => `${s.file}:${s.line}`;

describe("documentation snippets", () => {
  it("every snippet marker is well formed", () => {
    expect(extracted.flatMap((e) => (e.ok ? [] : [e.error]))).toEqual([]);
  });

  it("covers the README's quickstarts and the docs (the extractor is not vacuous)", () => {
    expect(files).toContain("docs/concepts.md");
    expect(snippets.filter((s) => s.file === "README.md").length).toBeGreaterThanOrEqual(3);
    expect(new Set(snippets.map((s) => s.file)).size).toBeGreaterThanOrEqual(8);
  });

  it("every block type-checks (strict, exactOptionalPropertyTypes, built declarations)", { timeout: 120_000 }, () => {
    expect(typecheckSnippets(written, root)).toEqual([]);
  });

  it.each(runnable.map((w) => [label(w.snippet), w] as const))("%s runs", { timeout: 60_000 }, async (_name, w) => {
    await import(pathToFileURL(w.modulePath).href);
  });
});

describe("the snippet checker itself", () => {
  const md = [
    "# a page",
    "",
    "```ts",
    'const n: number = "not a number";',
    "```",
    "",
    "<!-- snippet: typecheck-only",
    "declare const repoRoot: string;",
    "-->",
    "```typescript",
    "const root: number = repoRoot;",
    "```",
    "",
    "```bash",
    "```ts",
    "```",
  ].join("\n");

  it("reads blocks, modes and preludes, and skips fences of other languages", () => {
    const r = extractSnippets(md, "docs/page.md");
    expect(r).toEqual({
      ok: true,
      snippets: [
        { file: "docs/page.md", line: 4, mode: "run", prelude: "", code: 'const n: number = "not a number";' },
        { file: "docs/page.md", line: 11, mode: "typecheck-only", prelude: "declare const repoRoot: string;", code: "const root: number = repoRoot;" },
      ],
    });
  });

  it("reports a type error at the Markdown file and line it came from", { timeout: 120_000 }, () => {
    const r = extractSnippets(md, "docs/page.md");
    if (!r.ok) throw new Error(r.error);
    const errors = typecheckSnippets(writeSnippets(r.snippets, path.join(dir, "self")), root);
    expect(errors).toHaveLength(2);
    expect(errors[0]).toMatch(/^docs\/page\.md:4: TS2322: Type 'string' is not assignable to type 'number'/);
    expect(errors[1]).toMatch(/^docs\/page\.md:11: TS2322:/);
  });

  it("refuses an unknown marker and an unclosed block, naming file and line", () => {
    expect(extractSnippets("<!-- snippet: typecheck-onyl -->\n```ts\nx\n```", "a.md")).toEqual({
      ok: false,
      error: 'a.md:1: unknown snippet mode "typecheck-onyl". Fix: write <!-- snippet: typecheck-only --> or <!-- snippet: run -->',
    });
    expect(extractSnippets("```ts\nx", "a.md")).toMatchObject({ ok: false, error: expect.stringMatching(/^a\.md:1: a ```ts block is never closed/) });
  });
});
