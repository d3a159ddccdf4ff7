/**
 * A consumer bundled with esbuild (as a pi extension or a CLI tool often is) takes run locks: proper-lockfile is
 * loaded lazily, and in a bundle there is no node_modules beside the code. Each bundle is written to a temp folder
 * outside the workspace and run by a plain `node` child. Also: signal-exit stays inert inside the bundle (no
 * signal handler installed), and a bundle that left proper-lockfile out says so (DEPENDENCY_MISSING), not "check
 * the run folder's permissions".
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build, type BuildOptions } from "esbuild";
import { afterAll, describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const dir = mkdtempSync(path.join(os.tmpdir(), "phasekit-bundle-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// The consumer: one run with one step, then what the process's signal handling looks like after the lock was held.
const CONSUMER = `
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { runWorkflow } from "@phasekit/adapters-pi";
async function main() {
  const repoRoot = mkdtempSync(path.join(tmpdir(), "phasekit-bundled-run-"));
  try {
    const r = await runWorkflow({ repoRoot, toolName: "bundled-consumer" }, async (ctx) => (await ctx.step("one", {}, () => 41)) + 1);
    const handlers = ["SIGINT", "SIGTERM", "SIGXFSZ", "SIGHUP"].map((s) => process.listeners(s).length);
    console.log(JSON.stringify({ status: r.status, result: r.status === "completed" ? r.result : null, handlers }));
  } catch (e) {
    console.log(JSON.stringify({ thrown: e.code, message: e.message }));
  }
}
main();
`;

async function bundle(name: string, options: BuildOptions): Promise<string> {
  const entry = path.join(dir, `${name}.ts`);
  writeFileSync(entry, CONSUMER);
  const outfile = path.join(dir, name, options.format === "cjs" ? "main.cjs" : "main.mjs");
  // Resolved as a consumer resolves it: the package name through node_modules (its built dist, no source condition).
  await build({ entryPoints: [entry], bundle: true, platform: "node", target: "node20", outfile, nodePaths: [path.join(ROOT, "node_modules")], logLevel: "silent", ...options });
  return outfile;
}

function run(file: string): Record<string, unknown> {
  const r = spawnSync(process.execPath, [file], { cwd: path.dirname(file), encoding: "utf8", timeout: 30_000 });
  const line = r.stdout.trim().split("\n").pop() ?? "";
  expect(line, r.stderr).toMatch(/^\{/);
  return JSON.parse(line) as Record<string, unknown>;
}

describe("a consumer bundled with esbuild", () => {
  it("an ESM bundle takes the lock, runs to completion and installs no signal handler", async () => {
    // The usual banner for CommonJS dependencies inside an ESM bundle.
    const file = await bundle("esm", { format: "esm", banner: { js: 'import { createRequire as __phasekitCr } from "node:module"; const require = __phasekitCr(import.meta.url);' } });
    expect(run(file)).toEqual({ status: "completed", result: 42, handlers: [0, 0, 0, 0] });
  });

  it("a CommonJS bundle (import.meta.url empty there) does the same", async () => {
    const file = await bundle("cjs", { format: "cjs" });
    expect(run(file)).toEqual({ status: "completed", result: 42, handlers: [0, 0, 0, 0] });
  });

  it("a bundle that left proper-lockfile out fails with DEPENDENCY_MISSING naming it", async () => {
    const file = await bundle("external", { format: "cjs", external: ["proper-lockfile"] });
    const out = run(file);
    expect(out["thrown"]).toBe("DEPENDENCY_MISSING");
    expect(String(out["message"])).toContain("proper-lockfile");
    expect(String(out["message"])).not.toContain("permissions");
  });
});
