/**
 * The folder architecture is enforced by dependency-cruiser (.dependency-cruiser.cjs). These tests prove the
 * check bites: a tree with a planted cycle or an upward import fails it, and the real tree passes.
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
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
