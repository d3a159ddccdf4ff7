/**
 * The `phasekit` bin as users get it: both packages packed (pnpm pack runs prepack, which builds), installed
 * with npm into a fresh project, then run through `npx phasekit`, whose bin is a symlink in node_modules/.bin.
 * That symlink is where a "run only when executed directly" check silently did nothing. Also: the workspace
 * links the bin at install time (a committed file, so no ENOENT warning) and it runs there.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createReporter, runWorkflow } from "@phasekit/adapters-pi";

const ROOT = fileURLToPath(new URL("../../../../", import.meta.url));
const EXEC = process.env["npm_execpath"];
const PNPM: [string, string[]] = EXEC && /pnpm/.test(EXEC) ? [process.execPath, [EXEC]] : ["pnpm", []];
let dir = "";
let app = "";
let repo = "";
let adaptersTgz = "";

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), "phasekit-bin-"));
  for (const p of ["core", "adapters-pi"]) execFileSync(PNPM[0], [...PNPM[1], "pack", "--pack-destination", dir], { cwd: path.join(ROOT, "packages", p), stdio: "pipe" });
  const tarballs = readdirSync(dir).map((f) => path.join(dir, f));
  adaptersTgz = tarballs.find((f) => f.includes("adapters-pi")) as string;
  app = path.join(dir, "app");
  mkdirSync(app);
  writeFileSync(path.join(app, "package.json"), JSON.stringify({ name: "app", private: true, version: "1.0.0" }));
  execFileSync("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", ...tarballs], { cwd: app, stdio: "pipe" });
  repo = path.join(dir, "repo");
  mkdirSync(repo);
  await runWorkflow({ repoRoot: repo, target: "shipped", toolName: "builder", createReporter: () => createReporter({ onChange: () => undefined }) }, (ctx) => ctx.step("s", {}, () => 1));
}, 240_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const npx = (args: string[]) => spawnSync("npx", ["--no-install", "phasekit", ...args], { cwd: app, encoding: "utf8" });

describe("the phasekit bin from a packed tarball", () => {
  it("ships the bin, the inspector page and the JSON Schemas", () => {
    const files = execFileSync("tar", ["tzf", adaptersTgz], { encoding: "utf8" }).split("\n");
    for (const f of ["bin/phasekit.js", "dist/cli/main.js", "ui/index.html", "ui/app.js", "ui/style.css", "schemas/workflow-definition.schema.json", "schemas/phase-front-matter.schema.json"]) {
      expect(files).toContain(`package/${f}`);
    }
  });

  it("npx phasekit list prints the runs through the node_modules/.bin symlink; stop really reaches the run", () => {
    expect(lstatSync(path.join(app, "node_modules", ".bin", "phasekit")).isSymbolicLink()).toBe(true);
    const list = npx(["list", "--repo", repo]);
    expect(list.status).toBe(0);
    expect(list.stdout).toMatch(/^ID\s+STATUS/);
    expect(list.stdout).toMatch(/shipped\s+completed\s+builder/);
    expect(npx(["--version"]).stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
    // The old bin answered every command, stop included, with nothing and exit 0. Now a stop reaches the run's
    // rules: a completed run refuses it, saying why, and no request file is written.
    const stop = npx(["stop", "shipped", "--repo", repo]);
    expect(stop.status).toBe(1);
    // npm may print its own config warnings first; phasekit's line is the last.
    expect(stop.stderr.trim().split("\n").at(-1)).toBe("phasekit: run shipped is completed; a stop request is refused. Fix: nothing to do: the run is over");
    expect(existsSync(path.join(repo, "ai_plan", "shipped", "stop-request.json"))).toBe(false);
    expect(npx(["lsit"]).status).toBe(2);
  });

  it("every code entry point of the installed package imports in plain node (root, /store-kit, /plan-folder, /pi, /testing; /otel names its peer)", () => {
    const manifest = JSON.parse(readFileSync(path.join(app, "node_modules", "@phasekit", "adapters-pi", "package.json"), "utf8")) as { exports: Record<string, unknown> };
    const entries = Object.keys(manifest.exports).filter((k) => !k.endsWith(".json"));
    expect(entries.sort()).toEqual([".", "./otel", "./pi", "./plan-folder", "./store-kit", "./testing"]);
    const plain = entries.filter((k) => k !== "./otel");
    const script = plain.map((k) => `n.push(Object.keys(await import(${JSON.stringify(`@phasekit/adapters-pi${k.slice(1)}`)})).length);`).join("");
    const r = spawnSync(process.execPath, ["--input-type=module", "-e", `const n = []; ${script} console.log(JSON.stringify(n));`], { cwd: app, encoding: "utf8" });
    expect(r.status, r.stderr).toBe(0);
    for (const count of JSON.parse(r.stdout) as number[]) expect(count).toBeGreaterThan(2);
    // /otel needs its optional peer, which this consumer has not installed: the error names it.
    const otel = spawnSync(process.execPath, ["--input-type=module", "-e", `await import("@phasekit/adapters-pi/otel");`], { cwd: app, encoding: "utf8" });
    expect(otel.status).not.toBe(0);
    expect(otel.stderr).toContain("@opentelemetry/api");
  });

  it("the workspace links the bin and it runs", () => {
    const bin = path.join(ROOT, "node_modules", ".bin", "phasekit");
    expect(existsSync(bin)).toBe(true);
    const r = spawnSync(bin, ["list", "--repo", repo], { encoding: "utf8" });
    expect(r.status).toBe(0);
    expect(r.stdout).toContain("shipped");
  });
});
