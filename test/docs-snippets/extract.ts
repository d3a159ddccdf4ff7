/**
 * The TypeScript blocks of the documentation, as the snippet test checks them. A block is a ```ts or
 * ```typescript fence. It runs as written unless the comment right above its fence says otherwise:
 *
 *   <!-- snippet: typecheck-only -->            type-checked, not run (it needs a database, a pi host, …)
 *   <!-- snippet: typecheck-only                 the lines up to `-->` are a hidden prelude (imports and
 *   declare const ctx: RunContext;               `declare`s for a fragment), type-checked with the block
 *   -->
 *   <!-- snippet: run … -->                      the default, spelled out when a prelude is needed
 *
 * Any other `snippet:` word is an error: a typo must not quietly take a block out of the test.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";

export type SnippetMode = "run" | "typecheck-only";

/** One block: where it is (1-based line of its first code line), how it is checked, and its text. */
export interface Snippet {
  readonly file: string;
  readonly line: number;
  readonly mode: SnippetMode;
  readonly prelude: string;
  readonly code: string;
}

export type Extracted = { ok: true; snippets: Snippet[] } | { ok: false; error: string };

const FENCE_OPEN = /^```(ts|typescript)\s*$/;
const FENCE_ANY = /^\s*```/;
const MARKER = /^<!--\s*snippet:\s*([a-z]+(?:-[a-z]+)*)\s*(.*)$/;

/** The blocks of one Markdown text (`file` is how errors and test names refer to it). */
export function extractSnippets(markdown: string, file: string): Extracted {
  const lines = markdown.split("\n");
  const snippets: Snippet[] = [];
  let fenced = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? "";
    if (fenced) {
      if (/^\s*```\s*$/.test(line)) fenced = false;
      continue;
    }
    if (!FENCE_ANY.test(line)) continue;
    if (!FENCE_OPEN.test(line)) {
      fenced = true; // another language: skip to its end, so a ```ts inside it is not read as a block
      continue;
    }
    const end = lines.findIndex((l, j) => j > i && /^```\s*$/.test(l));
    if (end < 0) return { ok: false, error: `${file}:${i + 1}: a \`\`\`ts block is never closed. Fix: end it with a line \`\`\`` };
    const marker = markerAbove(lines, i, file);
    if (!marker.ok) return marker;
    snippets.push({ file, line: i + 2, mode: marker.mode, prelude: marker.prelude, code: lines.slice(i + 1, end).join("\n") });
    i = end;
  }
  return { ok: true, snippets };
}

type Marker = { ok: true; mode: SnippetMode; prelude: string } | { ok: false; error: string };

/** The `<!-- snippet: … -->` comment ending on the line right above the fence at `fence`, if any. */
function markerAbove(lines: readonly string[], fence: number, file: string): Marker {
  const above = lines[fence - 1] ?? "";
  if (!above.trimEnd().endsWith("-->")) return { ok: true, mode: "run", prelude: "" };
  let start = fence - 1;
  while (start >= 0 && !(lines[start] ?? "").startsWith("<!--")) start--;
  const m = start < 0 ? null : MARKER.exec(lines[start] ?? "");
  if (m === null) return { ok: true, mode: "run", prelude: "" }; // another comment: not ours
  const mode = m[1];
  if (mode !== "run" && mode !== "typecheck-only") {
    return { ok: false, error: `${file}:${start + 1}: unknown snippet mode "${mode}". Fix: write <!-- snippet: typecheck-only --> or <!-- snippet: run -->` };
  }
  const rest = [(m[2] ?? "").replace(/-->\s*$/, ""), ...lines.slice(start + 1, fence)].join("\n").replace(/-->\s*$/, "");
  return { ok: true, mode, prelude: rest.trim() };
}

/** The documentation the test covers: README.md, every Markdown file under docs/, and packages/*\/README.md. */
export function documentationFiles(root: string): string[] {
  const docs = readdirSync(path.join(root, "docs"), { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".md"))
    .map((f) => path.join("docs", f));
  const readmes = readdirSync(path.join(root, "packages"), { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => path.join("packages", d.name, "README.md"))
    .filter((f) => {
      try {
        readFileSync(path.join(root, f));
        return true;
      } catch {
        return false;
      }
    });
  return ["README.md", ...docs.sort(), ...readmes.sort()];
}
