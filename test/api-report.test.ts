/**
 * The API report: every entry point of every package, its exported names with their kinds and types (function
 * signatures, interface members, type aliases), compared with the committed `test/api-report/<package>.api.txt`.
 * A change to the public surface, types included, is then a visible diff in the same commit (public-api.test.ts
 * freezes only the runtime names). Regenerate on purpose with `PHASEKIT_UPDATE_API=1`.
 */
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const ENTRIES: Record<string, string[]> = {
  core: ["src/index.ts"],
  "adapters-pi": ["src/index.ts", "src/pi/index.ts", "src/store-kit.ts", "src/plan-folder.ts", "src/testing/index.ts", "src/otel/index.ts"],
  "store-postgres": ["src/index.ts"],
};
const FLAGS = ts.TypeFormatFlags.NoTruncation;

function program(): ts.Program {
  const config = ts.readConfigFile(path.join(ROOT, "tsconfig.base.json"), (p) => ts.sys.readFile(p));
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, ROOT);
  const roots = Object.entries(ENTRIES).flatMap(([pkg, files]) => files.map((f) => path.join(ROOT, "packages", pkg, f)));
  return ts.createProgram({ rootNames: roots, options: { ...parsed.options, noEmit: true, composite: false, declaration: false, declarationMap: false, types: ["node"] } });
}

/** One exported name as a line (or a block, for an interface's members). */
function describeSymbol(checker: ts.TypeChecker, name: string, symbol: ts.Symbol): string {
  const s = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
  const lines: string[] = [];
  if (s.flags & ts.SymbolFlags.Interface || s.flags & ts.SymbolFlags.Class) {
    const type = checker.getDeclaredTypeOfSymbol(s);
    lines.push(`${s.flags & ts.SymbolFlags.Class ? "class" : "interface"} ${name}${typeParams(s.declarations?.[0])}`);
    for (const p of checker.getPropertiesOfType(type)) {
      const decl = p.valueDeclaration ?? p.declarations?.[0];
      const t = decl === undefined ? "?" : checker.typeToString(checker.getTypeOfSymbolAtLocation(p, decl), undefined, FLAGS);
      lines.push(`  ${p.name}${p.flags & ts.SymbolFlags.Optional ? "?" : ""}: ${t}`);
    }
  } else if (s.flags & ts.SymbolFlags.TypeAlias) {
    const decl = s.declarations?.[0] as ts.TypeAliasDeclaration | undefined;
    lines.push(`type ${name}${typeParams(decl)} = ${decl === undefined ? "?" : decl.type.getText().replace(/\s+/g, " ")}`);
  }
  if (s.flags & ts.SymbolFlags.Value && !(s.flags & ts.SymbolFlags.Class)) {
    const decl = s.valueDeclaration ?? s.declarations?.[0];
    if (decl !== undefined) {
      const type = checker.getTypeOfSymbolAtLocation(s, decl);
      const sigs = type.getCallSignatures();
      if (s.flags & ts.SymbolFlags.Function && sigs.length > 0) for (const sig of sigs) lines.push(`function ${name}${checker.signatureToString(sig, undefined, FLAGS)}`);
      else lines.push(`const ${name}: ${checker.typeToString(type, undefined, FLAGS)}`);
    }
  }
  return lines.join("\n");
}

function typeParams(decl: ts.Declaration | undefined): string {
  const params = decl !== undefined && (ts.isInterfaceDeclaration(decl) || ts.isTypeAliasDeclaration(decl) || ts.isClassDeclaration(decl)) ? decl.typeParameters : undefined;
  return params === undefined ? "" : `<${params.map((t) => t.getText()).join(", ")}>`;
}

function report(p: ts.Program, pkg: string): string {
  const checker = p.getTypeChecker();
  const out: string[] = [`# API report of @phasekit/${pkg} (test/api-report.test.ts; PHASEKIT_UPDATE_API=1 regenerates it)`];
  for (const file of ENTRIES[pkg] ?? []) {
    const sf = p.getSourceFile(path.join(ROOT, "packages", pkg, file));
    const mod = sf === undefined ? undefined : checker.getSymbolAtLocation(sf);
    out.push("", `## ${file}`);
    const exports = mod === undefined ? [] : checker.getExportsOfModule(mod);
    for (const e of [...exports].sort((a, b) => a.name.localeCompare(b.name))) out.push(describeSymbol(checker, e.name, e));
  }
  // Absolute paths in fully qualified names would make the report depend on the checkout, and a unique symbol's
  // printed name carries the checker's symbol id (`__@compiledBrand@2195`), which moves whenever a file is added.
  return `${out.join("\n").split(ROOT).join("").replace(/__@([A-Za-z_$][\w$]*)@\d+/g, "__@$1")}\n`;
}

describe("API report", () => {
  const p = program();
  it.each(Object.keys(ENTRIES))("@phasekit/%s matches its committed report", (pkg) => {
    const file = path.join(ROOT, "test", "api-report", `${pkg}.api.txt`);
    const now = report(p, pkg);
    if (process.env["PHASEKIT_UPDATE_API"] === "1") writeFileSync(file, now);
    let committed = "";
    try {
      committed = readFileSync(file, "utf8");
    } catch {
      // No report yet: the comparison below fails with the whole text as the diff.
    }
    expect(now, `the public API of @phasekit/${pkg} changed: review the diff, then regenerate with PHASEKIT_UPDATE_API=1`).toBe(committed);
  });
}, 120_000);
