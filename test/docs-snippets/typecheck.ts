/**
 * Type-checks documentation snippets the way a consumer compiles them: one TypeScript program for all of them
 * (one program, not one per block, keeps the test fast), the repository's strict options plus
 * `exactOptionalPropertyTypes` (a setting many consumers turn on), and the packages as a consumer sees them
 * (their built declarations, not their sources). Each block becomes its own module in `dir`, so names never
 * clash between blocks; a diagnostic is reported at the Markdown file and line it came from.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import ts from "typescript";
import type { Snippet } from "./extract.js";

/** A snippet written out as a module: its file and how its lines map back to the Markdown. */
export interface WrittenSnippet {
  readonly snippet: Snippet;
  readonly modulePath: string;
  readonly preludeLines: number;
}

/** Writes each snippet to `dir` as `NN-<doc>-<line>.ts` (prelude, then the block, then `export {}`). */
export function writeSnippets(snippets: readonly Snippet[], dir: string): WrittenSnippet[] {
  mkdirSync(dir, { recursive: true });
  return snippets.map((snippet, i) => {
    const name = `${String(i).padStart(2, "0")}-${snippet.file.replace(/[^A-Za-z0-9]+/g, "-")}-${snippet.line}.ts`;
    const modulePath = path.join(dir, name);
    const prelude = snippet.prelude === "" ? [] : snippet.prelude.split("\n");
    writeFileSync(modulePath, [...prelude, snippet.code, "export {};", ""].join("\n"));
    return { snippet, modulePath, preludeLines: prelude.length };
  });
}

/** Every type error of the written snippets, as `docs/x.md:LINE: message` (empty when all compile). */
export function typecheckSnippets(written: readonly WrittenSnippet[], repoRoot: string): string[] {
  const base = ts.getParsedCommandLineOfConfigFile(path.join(repoRoot, "tsconfig.base.json"), {}, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (d) => {
      throw new Error(ts.flattenDiagnosticMessageText(d.messageText, "\n"));
    },
  });
  if (base === undefined) throw new Error("tsconfig.base.json could not be read");
  const { customConditions: _source, ...strict } = base.options; // consumers resolve to dist, not src
  const options: ts.CompilerOptions = {
    ...strict,
    exactOptionalPropertyTypes: true,
    noUnusedLocals: false, // a snippet may name a value only to show it (`const result = await …`)
    noEmit: true,
    composite: false,
    declaration: false,
    declarationMap: false,
    sourceMap: false,
    incremental: false,
    types: ["node"],
  };
  const program = ts.createProgram(written.map((w) => w.modulePath), options);
  const byPath = new Map(written.map((w) => [path.resolve(w.modulePath), w]));
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const text = ts.flattenDiagnosticMessageText(d.messageText, "\n");
    const w = d.file === undefined ? undefined : byPath.get(path.resolve(d.file.fileName));
    if (d.file === undefined || d.start === undefined || w === undefined) return `${d.file?.fileName ?? "(program)"}: TS${d.code}: ${text}`;
    const { line } = d.file.getLineAndCharacterOfPosition(d.start);
    const where = line < w.preludeLines ? `${w.snippet.file}:${w.snippet.line - 1} (its snippet prelude, line ${line + 1})` : `${w.snippet.file}:${w.snippet.line + line - w.preludeLines}`;
    return `${where}: TS${d.code}: ${text}`;
  });
}
