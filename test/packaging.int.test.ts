/**
 * Both packages as a consumer gets them: packed into tarballs (pnpm pack, which runs `prepack` and so builds
 * first), installed with npm into a fresh project outside the workspace, then loaded with `import` and with
 * `require()` (Node >= 20.19 loads ESM through the "default" condition).
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const PACKAGES = ["core", "adapters-pi"] as const;
// The pnpm that runs this test (CI runs it through npx, with no global pnpm), else the one on PATH.
const EXEC = process.env["npm_execpath"];
const PNPM: [string, string[]] = EXEC && /pnpm/.test(EXEC) ? [process.execPath, [EXEC]] : ["pnpm", []];
let dir = "";
let app = "";
const tarballs: Record<string, string> = {};

beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), "phasekit-pack-"));
  for (const p of PACKAGES) {
    execFileSync(PNPM[0], [...PNPM[1], "pack", "--pack-destination", dir], { cwd: path.join(ROOT, "packages", p), stdio: "pipe" });
  }
  for (const f of readdirSync(dir)) tarballs[f.replace(/-\d+\.\d+\.\d+\.tgz$/, "")] = path.join(dir, f);
  app = path.join(dir, "app");
  mkdirSync(app);
  writeFileSync(path.join(app, "package.json"), JSON.stringify({ name: "app", private: true, version: "1.0.0" }));
  execFileSync("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", ...Object.values(tarballs)], {
    cwd: app,
    stdio: "pipe",
  });
}, 240_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function listTarball(file: string): string[] {
  return execFileSync("tar", ["tzf", file], { encoding: "utf8" }).trim().split("\n");
}

function node(args: string[]): { status: number | null; out: string } {
  const r = spawnSync(process.execPath, args, { cwd: app, encoding: "utf8" });
  return { status: r.status, out: r.stdout + r.stderr };
}

describe("packed tarballs", () => {
  it.each(PACKAGES)("%s ships its build, README, LICENSE and repository fields", (p) => {
    const tgz = tarballs[`phasekit-${p}`] as string;
    const files = listTarball(tgz);
    for (const f of ["package/README.md", "package/LICENSE", "package/dist/index.js", "package/dist/index.d.ts"]) {
      expect(files).toContain(f);
    }
    expect(files.some((f) => f.endsWith(".tsbuildinfo"))).toBe(false);
    const pkg = JSON.parse(execFileSync("tar", ["xzf", tgz, "-O", "package/package.json"], { encoding: "utf8" }));
    expect(pkg.repository?.url).toMatch(/^git\+https:/);
    expect(pkg.homepage).toBeTruthy();
    expect(JSON.stringify(pkg.dependencies ?? {})).not.toContain("workspace:");
  });

  it("import and require() both load the packages in a fresh project", () => {
    const esm = node([
      "--input-type=module",
      "-e",
      'import { reduce } from "@phasekit/core"; import { runWorkflow } from "@phasekit/adapters-pi"; console.log(typeof reduce, typeof runWorkflow);',
    ]);
    expect(esm.out.trim()).toBe("function function");
    const cjs = node(["-e", 'const c = require("@phasekit/core"); const a = require("@phasekit/adapters-pi"); console.log(typeof c.compileDefinitions, typeof a.runWorkflow);']);
    expect(cjs.out.trim()).toBe("function function");
  });

  it("the consumer gets one copy of zod, shared with the schemas core exports", () => {
    const r = node([
      "--input-type=module",
      "-e",
      'import { z } from "zod"; import { WorkflowStateSchema } from "@phasekit/core"; console.log(WorkflowStateSchema instanceof z.ZodType);',
    ]);
    // zod is not a direct dependency of the app, so resolve it the way the app's own code would after `npm i zod`:
    // the hoisted copy. One hoisted copy means core's schemas are instances of the consumer's zod classes.
    expect(r.out.trim()).toBe("true");
    const ls = spawnSync("npm", ["ls", "zod", "--all", "--parseable"], { cwd: app, encoding: "utf8" });
    const copies = new Set(ls.stdout.trim().split("\n").filter(Boolean));
    expect(copies.size).toBe(1);
  });

  it("a compiled workflow and a run of the reducer work from the tarball", () => {
    const r = node([
      "--input-type=module",
      "-e",
      [
        'import { compileDefinitions, start, advance } from "@phasekit/core";',
        'const c = compileDefinitions({ w: { name: "W", phases: [{ id: "a", name: "A" }, { id: "b", name: "B" }] } });',
        "if (!c.ok) throw new Error('compile');",
        'const s = start(c.registry, { workflowKey: "w", taskId: "t1", taskDescription: "d" }, { now: 1 });',
        "if (!s.ok) throw new Error('start');",
        "const a = advance(c.registry, s.state, { now: 2 });",
        "if (!a.ok) throw new Error('advance 1');",
        "const b = advance(c.registry, a.state, { now: 3 });",
        "if (!b.ok) throw new Error('advance 2');",
        "console.log(a.state.status, b.state.status, b.happened.type);",
      ].join("\n"),
    ]);
    expect(r.status, r.out).toBe(0);
    expect(r.out.trim()).toBe("running completed completed");
  });

  it("a consumer on an older zod in the peer range (4.3) keeps it: one copy, its own", () => {
    // zod is a peer dependency (^4.2.0): the packages use the consumer's zod instead of bringing a newer one.
    const app2 = path.join(dir, "app-zod43");
    mkdirSync(app2);
    writeFileSync(path.join(app2, "package.json"), JSON.stringify({ name: "app-zod43", private: true, version: "1.0.0" }));
    execFileSync("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", "zod@4.3.6", ...Object.values(tarballs)], { cwd: app2, stdio: "pipe" });
    const ls = spawnSync("npm", ["ls", "zod", "--all", "--parseable"], { cwd: app2, encoding: "utf8" });
    expect(new Set(ls.stdout.trim().split("\n").filter(Boolean)).size).toBe(1);
    const r = spawnSync(process.execPath, ["--input-type=module", "-e", 'import { WorkflowStateSchema } from "@phasekit/core"; import { z } from "zod"; import { createRequire } from "node:module"; console.log(WorkflowStateSchema instanceof z.ZodType, createRequire(import.meta.url)("zod/package.json").version);'], { cwd: app2, encoding: "utf8" });
    expect(r.stdout.trim(), r.stderr).toBe("true 4.3.6");
  });
});
