/**
 * Phase files: Markdown with a YAML front matter block (`---` … `---`) whose body is the phase's instructions,
 * as pi-workflows 1.0.0 writes them. Errors and field lines are 1-based lines of the whole file.
 */
import { parseYamlSource } from "./yaml-source.js";

/** A parsed phase file, or the line and reason it could not be read. */
export type FrontMatterResult =
  | { ok: true; data: Record<string, unknown>; body: string; bodyLine: number; lineOf(path: readonly (string | number)[]): number }
  | { ok: false; line: number; reason: string };

const OPEN = /^---[ \t]*\r?\n/;
const CLOSE = /^---[ \t]*$/m;

/** Splits and parses `text`; a file without front matter has empty data and the whole text as body. */
export function parseFrontMatter(text: string): FrontMatterResult {
  const src = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const open = OPEN.exec(src);
  if (open === null) return { ok: true, data: {}, body: src, bodyLine: 1, lineOf: () => 1 };
  const rest = src.slice(open[0].length);
  const close = CLOSE.exec(rest);
  if (close === null) return { ok: false, line: 1, reason: "the front matter opened by '---' is never closed" };
  const body = rest.slice(close.index + close[0].length).replace(/^\r?\n/, "");
  // The body's first line in the file: the opening '---', the front matter's lines, the closing '---'.
  const bodyLine = 2 + lineCount(rest.slice(0, close.index)) + 1;
  const parsed = parseYamlSource(rest.slice(0, close.index), 1);
  if (!parsed.ok) return parsed;
  const data = parsed.value ?? {};
  if (typeof data !== "object" || Array.isArray(data)) {
    return { ok: false, line: 2, reason: "the front matter must be a mapping of fields (id, name, emoji, tools …)" };
  }
  return { ok: true, data: data as Record<string, unknown>, body, bodyLine, lineOf: parsed.lineOf };
}

function lineCount(text: string): number {
  let n = 0;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) n++;
  return n;
}
