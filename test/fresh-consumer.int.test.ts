/**
 * A new user's first project, from the README alone: the packages packed into tarballs (pnpm pack builds first),
 * installed with npm into a fresh folder outside the workspace, the README's three quickstarts copied in as
 * they are written, compiled by tsc with strict settings a consumer may use (exactOptionalPropertyTypes
 * included) and run: the script with node, the core alone with node, and the pi extension in the real pi CLI
 * of both hosts (`pi -e ./release-notes.ts`, then `/release-notes 1.2.0`), as the README says.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startPi } from "../examples/pi/pi-process.js";
import { startScriptedModel } from "../examples/pi/scripted-model.js";
import { HOSTS } from "../packages/adapters-pi/test/pi/hosts.js";
import { extractSnippets } from "./docs-snippets/extract.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const EXEC = process.env["npm_execpath"];
const PNPM: [string, string[]] = EXEC && /pnpm/.test(EXEC) ? [process.execPath, [EXEC]] : ["pnpm", []];
const QUICKSTARTS = ["script.ts", "release-notes.ts", "core.ts"] as const;
let dir = "";
let app = "";

beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), "phasekit-consumer-"));
  for (const p of ["core", "adapters-pi"]) {
    execFileSync(PNPM[0], [...PNPM[1], "pack", "--pack-destination", dir], { cwd: path.join(ROOT, "packages", p), stdio: "pipe" });
  }
  app = path.join(dir, "app");
  mkdirSync(app);
  writeFileSync(path.join(app, "package.json"), JSON.stringify({ name: "app", private: true, version: "1.0.0", type: "module" }));
  const tgz = readdirSync(dir).filter((f) => f.endsWith(".tgz")).map((f) => path.join(dir, f));
  execFileSync("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", ...tgz], { cwd: app, stdio: "pipe" });
  // The quickstarts, in the README's order, exactly as written there.
  const readme = extractSnippets(readFileSync(path.join(ROOT, "README.md"), "utf8"), "README.md");
  if (!readme.ok) throw new Error(readme.error);
  expect(readme.snippets.map((s) => s.mode)).toEqual(["run", "run", "run"]);
  readme.snippets.forEach((s, i) => writeFileSync(path.join(app, QUICKSTARTS[i] as string), `${s.code}\n`));
  // @types/node from the workspace (a consumer installs it; this test stays offline).
  const tsconfig = {
    compilerOptions: {
      target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", strict: true, exactOptionalPropertyTypes: true,
      noUncheckedIndexedAccess: true, skipLibCheck: true, outDir: "out", types: ["node"], typeRoots: [path.join(ROOT, "node_modules", "@types")],
    },
    files: [...QUICKSTARTS],
  };
  writeFileSync(path.join(app, "tsconfig.json"), JSON.stringify(tsconfig, null, 2));
}, 300_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function node(file: string): { status: number | null; stdout: string; stderr: string } {
  return spawnSync(process.execPath, [file], { cwd: app, encoding: "utf8", timeout: 60_000 });
}

describe("a fresh consumer project with the README's quickstarts", () => {
  it("compiles them with tsc (strict, exactOptionalPropertyTypes) against the installed packages", () => {
    const tsc = path.join(ROOT, "node_modules", "typescript", "bin", "tsc");
    const r = spawnSync(process.execPath, [tsc, "-p", "."], { cwd: app, encoding: "utf8" });
    expect(r.stdout + r.stderr, "tsc output").toBe("");
    expect(r.status).toBe(0);
  }, 120_000);

  it("quickstart 1 (runWorkflow in a script) completes, and the second run reuses both steps", () => {
    const r = node("out/script.js");
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^completed \{/);
    expect(r.stdout).toContain("plan: reused (completed checkpoint with the same input fingerprint)");
    expect(r.stdout).toContain("notes: reused (completed checkpoint with the same input fingerprint)");
  });

  it("quickstart 3 (the core alone) prints what the README says it prints", () => {
    const r = node("out/core.js");
    expect(r.status, r.stderr).toBe(0);
    const printed = readFileSync(path.join(ROOT, "README.md"), "utf8").split("It prints:\n\n```\n")[1]?.split("\n```")[0];
    expect(printed).toBeDefined();
    expect(r.stdout.trim()).toBe(printed);
  });

  it.each(HOSTS)("quickstart 2 (a pi extension) runs its durable job in pi $name: pi -e ./release-notes.ts, /release-notes 1.2.0", async ({ get }) => {
    const model = await startScriptedModel();
    const home = mkdtempSync(path.join(dir, "pi-"));
    const pi = startPi({ host: get(), cwd: app, agentDir: path.join(home, ".pi", "agent"), sessionDir: path.join(home, "sessions"), extension: "./release-notes.ts", baseUrl: model.baseUrl });
    try {
      pi.send({ type: "prompt", message: "/release-notes 1.2.0" });
      const note = await pi.waitFor((l) => l["method"] === "notify" && String(l["message"]).startsWith("release notes 1.2.0:"), 60_000, "the command's notify");
      expect(note["message"]).toBe("release notes 1.2.0: completed");
      const runDir = path.join(app, "ai_plan", "notes-1-2-0");
      expect(existsSync(path.join(runDir, "workflow.json"))).toBe(true);
      expect(JSON.parse(readFileSync(path.join(runDir, "workflow.json"), "utf8"))).toMatchObject({ status: "completed" });
      expect(model.requests).toHaveLength(0); // a command: the model is never asked
    } finally {
      await pi.kill();
      await model.close();
    }
  }, 300_000);
});
