/**
 * YAML text parsed with its source positions, so that a problem found later (by core's compiler, which sees
 * only plain values) can still point at a line of the file the user wrote.
 */
import { isMap, isSeq, LineCounter, parseDocument, type Node } from "yaml";

/** A parsed YAML document: its plain value and the 1-based line of any path inside it. */
export type YamlSource =
  | { ok: true; value: unknown; lineOf(path: readonly (string | number)[]): number }
  | { ok: false; line: number; reason: string };

/** Parses `text`; line numbers are shifted by `lineOffset` (the lines before it in its file). */
export function parseYamlSource(text: string, lineOffset = 0): YamlSource {
  const counter = new LineCounter();
  // uniqueKeys and a small alias budget: a hostile file cannot blow up memory through alias expansion.
  const doc = parseDocument(text, { lineCounter: counter, uniqueKeys: true, prettyErrors: false });
  const first = doc.errors[0];
  if (first !== undefined) {
    const line = (first.linePos?.[0]?.line ?? counter.linePos(first.pos[0]).line) + lineOffset;
    return { ok: false, line, reason: firstLine(first.message) };
  }
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: 100 });
  } catch (error) {
    return { ok: false, line: 1 + lineOffset, reason: firstLine(error instanceof Error ? error.message : String(error)) };
  }
  const lineAt = (offset: number | undefined) => (offset === undefined ? 1 : counter.linePos(offset).line) + lineOffset;
  return {
    ok: true,
    value,
    lineOf(path) {
      // Walk as deep as the path exists; the deepest node found is the best line to show.
      let node: unknown = doc.contents;
      let offset = (doc.contents as Node | null)?.range?.[0];
      for (const segment of path) {
        let next: unknown;
        if (isMap(node)) {
          const pair = node.items.find((p) => (p.key as { value?: unknown } | null)?.value === segment);
          if (pair === undefined) break;
          offset = (pair.key as Node | null)?.range?.[0] ?? offset;
          next = pair.value;
        } else if (isSeq(node) && typeof segment === "number") {
          next = node.items[segment];
          if (next === undefined) break;
          offset = (next as Node).range?.[0] ?? offset;
        } else break;
        node = next;
      }
      return lineAt(offset);
    },
  };
}

function firstLine(message: string): string {
  return message.split("\n")[0] ?? message;
}
