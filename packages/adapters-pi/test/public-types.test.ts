/**
 * The type-level tests, compiled as a consumer compiles them: `strict` with `exactOptionalPropertyTypes` (the
 * workspace typecheck runs them without it). Every `@ts-expect-error <text>` in the fixtures must be an error
 * whose message contains <text>, so a refusal that stops naming the field fails here, not only one that passes.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const FIXTURES = ["step-output.types.ts", "options-undefined.types.ts"].map((f) => fileURLToPath(new URL(`./types/${f}`, import.meta.url)));
const DIRECTIVE = /\/\/ @ts-expect-error (.+)$/;

interface Expected {
  file: string;
  line: number;
  text: string;
}

/** The fixtures with their directives turned into plain comments, and what each marked line must report. */
function stripped(): { texts: Map<string, string>; expected: Expected[] } {
  const texts = new Map<string, string>();
  const expected: Expected[] = [];
  for (const file of FIXTURES) {
    const lines = readFileSync(file, "utf8").split("\n");
    lines.forEach((l, i) => {
      const m = DIRECTIVE.exec(l);
      if (m?.[1] !== undefined) expected.push({ file, line: i + 1, text: m[1] });
    });
    texts.set(file, lines.map((l) => l.replace("// @ts-expect-error ", "// expected: ")).join("\n"));
  }
  return { texts, expected };
}

function compile(texts: Map<string, string>): readonly ts.Diagnostic[] {
  const config = ts.readConfigFile(`${ROOT}tsconfig.base.json`, (p) => ts.sys.readFile(p));
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, ROOT);
  const options: ts.CompilerOptions = { ...parsed.options, exactOptionalPropertyTypes: true, noEmit: true, composite: false, declaration: false, declarationMap: false, types: ["node"], skipLibCheck: true };
  const host = ts.createCompilerHost(options);
  const read = host.readFile.bind(host);
  host.readFile = (p) => texts.get(p) ?? read(p);
  const program = ts.createProgram({ rootNames: FIXTURES, options, host });
  // Only the fixtures' own diagnostics: the packages' sources are checked by their own builds.
  return FIXTURES.flatMap((f) => {
    const sf = program.getSourceFile(f);
    return sf === undefined ? [] : [...program.getSyntacticDiagnostics(sf), ...program.getSemanticDiagnostics(sf)];
  });
}

const where = (d: ts.Diagnostic): { file: string; line: number } => ({
  file: d.file?.fileName ?? "?",
  line: d.file !== undefined && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start).line + 1 : 0,
});

describe("public types as a consumer compiles them", () => {
  const { texts, expected } = stripped();
  const diagnostics = compile(texts);
  const messages = diagnostics.map((d) => ({ ...where(d), text: ts.flattenDiagnosticMessageText(d.messageText, "\n") }));

  it("has no error other than the marked ones", () => {
    const unexpected = messages.filter((m) => !expected.some((e) => e.file === m.file && e.line + 1 === m.line));
    expect(unexpected).toEqual([]);
  });

  it.each(expected.map((e) => [`${e.file.split("/").pop()}:${e.line}`, e] as const))("%s fails with a message that names the field", (_name, e) => {
    const found = messages.filter((m) => m.file === e.file && m.line === e.line + 1);
    expect(found.length, `no error at line ${e.line + 1}`).toBeGreaterThan(0);
    expect(found.map((m) => m.text).join("\n")).toContain(e.text);
  });
});
