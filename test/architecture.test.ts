/**
 * The folder architecture is enforced by dependency-cruiser (.dependency-cruiser.cjs). These tests prove the
 * check bites: a tree with a planted cycle or an upward import fails it, and the real tree passes.
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const CRUISE = path.join(ROOT, "node_modules/dependency-cruiser/bin/dependency-cruise.mjs");
const temps: string[] = [];
afterEach(() => temps.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

function cruise(cwd: string): { status: number | null; out: string } {
  const r = spawnSync(process.execPath, [CRUISE, "packages", "--config", ".dependency-cruiser.cjs"], {
    cwd,
    encoding: "utf8",
  });
  return { status: r.status, out: r.stdout + r.stderr };
}

/** A throwaway repo holding the real config and the given source files. */
function tree(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), "phasekit-arch-"));
  temps.push(dir);
  copyFileSync(path.join(ROOT, ".dependency-cruiser.cjs"), path.join(dir, ".dependency-cruiser.cjs"));
  copyFileSync(path.join(ROOT, "tsconfig.base.json"), path.join(dir, "tsconfig.base.json"));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), text);
  }
  return dir;
}

describe("architecture check", () => {
  it("fails on a planted import cycle", () => {
    const r = cruise(
      tree({
        "packages/core/src/transitions/a.ts": 'import { b } from "./b.js";\nexport const a = () => b;\n',
        "packages/core/src/transitions/b.ts": 'import { a } from "./a.js";\nexport const b = () => a;\n',
      }),
    );
    expect(r.status).not.toBe(0);
    expect(r.out).toContain("no-circular");
  });

  it("fails on an import from a folder above", () => {
    const r = cruise(
      tree({
        "packages/adapters-pi/src/store/x.ts": 'import { y } from "../run/y.js";\nexport const x = y;\n',
        "packages/adapters-pi/src/run/y.ts": "export const y = 1;\n",
      }),
    );
    expect(r.status).not.toBe(0);
    expect(r.out).toContain("adapters-pi-store-no-upward");
  });

  it("fails when core imports a node builtin", () => {
    const r = cruise(tree({ "packages/core/src/state/x.ts": 'import fs from "node:fs";\nexport const x = fs;\n' }));
    expect(r.status).not.toBe(0);
    expect(r.out).toContain("core-is-pure");
  });

  it("passes on the real tree", () => {
    const r = cruise(ROOT);
    expect(r.out).toContain("no dependency violations");
    expect(r.status).toBe(0);
  });
});

/** Every .ts file under a package's src/, as a path relative to the repo root. */
function sourceFiles(): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith(".ts")) out.push(path.relative(ROOT, p));
    }
  };
  for (const pkg of readdirSync(path.join(ROOT, "packages"))) walk(path.join(ROOT, "packages", pkg, "src"));
  return out;
}

/** Every package's source entry points: what its `exports` map names under the "@phasekit/source" condition. */
function entryPoints(): Set<string> {
  const out = new Set<string>();
  for (const pkg of readdirSync(path.join(ROOT, "packages"))) {
    const manifest = JSON.parse(readFileSync(path.join(ROOT, "packages", pkg, "package.json"), "utf8")) as { exports?: Record<string, unknown> };
    for (const target of Object.values(manifest.exports ?? {})) {
      const source = typeof target === "object" && target !== null ? (target as Record<string, unknown>)["@phasekit/source"] : undefined;
      if (typeof source === "string") out.add(path.join("packages", pkg, source));
    }
  }
  return out;
}

// One concept per file keeps files short: ~250 lines is the aim; this bound is where a split is overdue.
const MAX_LINES = 300;

describe("source files", () => {
  it(`stay under ${MAX_LINES} lines`, () => {
    const long = sourceFiles()
      .map((f) => ({ f, lines: readFileSync(path.join(ROOT, f), "utf8").split("\n").length }))
      .filter((x) => x.lines > MAX_LINES);
    expect(long).toEqual([]);
  });

  it("live in a subsystem folder (only the package's entry points sit at the top of src/)", () => {
    const flat = sourceFiles().filter((f) => /^packages\/[^/]+\/src\/[^/]+\.ts$/.test(f) && !entryPoints().has(f));
    expect(flat).toEqual([]);
  });
});

describe("docs/architecture.md", () => {
  it("has a folder map that matches the tree, folder for folder", () => {
    const doc = readFileSync(path.join(ROOT, "docs/architecture.md"), "utf8");
    const documented = new Map<string, string[]>();
    let pkg: string | undefined;
    for (const line of doc.split("\n")) {
      const heading = /^### `packages\/([^/]+)\/src`/.exec(line);
      if (heading) pkg = heading[1];
      const row = /^\| `([a-z-]+)\/` \|/.exec(line);
      if (pkg && row) documented.set(pkg, [...(documented.get(pkg) ?? []), row[1] as string]);
    }
    const actual = new Map<string, string[]>();
    for (const p of readdirSync(path.join(ROOT, "packages"))) {
      const dirs = readdirSync(path.join(ROOT, "packages", p, "src"), { withFileTypes: true })
        .filter((e) => e.isDirectory())
        .map((e) => e.name);
      actual.set(p, dirs);
    }
    const sorted = (m: Map<string, string[]>) => Object.fromEntries([...m].map(([k, v]) => [k, [...v].sort()]).sort());
    expect(sorted(documented)).toEqual(sorted(actual));
  });
});
