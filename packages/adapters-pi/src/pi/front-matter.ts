/**
 * Phase files: Markdown with a YAML front matter block (`---` … `---`) whose body is the phase's
 * instructions, as pi-workflows 1.0.0 writes them. Errors carry the 1-based line in the file.
 */
import { parse as parseYaml, YAMLParseError } from "yaml";

/** A parsed phase file, or the line and reason it could not be read. */
export type FrontMatterResult =
  | { ok: true; data: Record<string, unknown>; body: string }
  | { ok: false; line: number; reason: string };

const OPEN = /^---[ \t]*\r?\n/;
const CLOSE = /^---[ \t]*$/m;

/** Splits and parses `text`; a file without front matter has empty data and the whole text as body. */
export function parseFrontMatter(text: string): FrontMatterResult {
  const src = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const open = OPEN.exec(src);
  if (open === null) return { ok: true, data: {}, body: src };
  const rest = src.slice(open[0].length);
  const close = CLOSE.exec(rest);
  if (close === null) return { ok: false, line: 1, reason: "the front matter opened by '---' is never closed" };
  const yamlText = rest.slice(0, close.index);
  const body = rest.slice(close.index + close[0].length).replace(/^\r?\n/, "");
  const parsed = parseYamlText(yamlText, 1);
  if (!parsed.ok) return parsed;
  const data = parsed.value ?? {};
  if (typeof data !== "object" || Array.isArray(data)) {
    return { ok: false, line: 2, reason: "the front matter must be a mapping of fields (id, name, emoji, tools …)" };
  }
  return { ok: true, data: data as Record<string, unknown>, body };
}

/** Parses YAML; a syntax error comes back with its line (shifted by `lineOffset` lines). */
export function parseYamlText(text: string, lineOffset = 0): { ok: true; value: unknown } | { ok: false; line: number; reason: string } {
  try {
    // uniqueKeys and a small alias budget: a hostile file cannot blow up memory through alias expansion.
    return { ok: true, value: parseYaml(text, { uniqueKeys: true, maxAliasCount: 100, prettyErrors: true, logLevel: "error" }) };
  } catch (error) {
    if (error instanceof YAMLParseError) {
      const line = (error.linePos?.[0]?.line ?? 1) + lineOffset;
      return { ok: false, line, reason: firstLine(error.message) };
    }
    return { ok: false, line: 1 + lineOffset, reason: firstLine(error instanceof Error ? error.message : String(error)) };
  }
}

function firstLine(message: string): string {
  // The line is reported separately (shifted to the file); drop yaml's own "at line L, column C:" suffix.
  return (message.split("\n")[0] ?? message).replace(/ at line \d+, column \d+:?$/, "");
}
