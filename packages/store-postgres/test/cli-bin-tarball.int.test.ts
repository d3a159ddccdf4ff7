/**
 * `phasekit --store postgres://…` as users get it: the packages packed (pnpm pack builds them), installed with
 * npm into a fresh project and run through `npx phasekit`. Without @phasekit/store-postgres installed the bin
 * says which package to install (adapters-pi has no dependency on it); once installed beside it, the same
 * command lists the runs a real server holds.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runWorkflow } from "@phasekit/adapters-pi";
import { openPostgresPlanStore } from "../src/index.js";
import { startCluster, type Cluster } from "./helpers/cluster.js";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const EXEC = process.env["npm_execpath"];
const PNPM: [string, string[]] = EXEC && /pnpm/.test(EXEC) ? [process.execPath, [EXEC]] : ["pnpm", []];
const started = startCluster();

if (!started.ok) {
  describe.skip(`phasekit bin --store (SKIPPED: ${started.reason})`, () => it("needs PostgreSQL", () => undefined));
} else {
  const cluster: Cluster = started.cluster;
  let dir = "";
  let app = "";
  let tarballs: Record<string, string> = {};
  const url = `${cluster.url}?namespace=bin`;
  // As a user's shell runs it: without the NODE_PATH pnpm's test runner sets, which leads into this workspace's
  // packages (@phasekit/store-postgres among them), so the bin's fallback resolution found the uninstalled one.
  const userEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== "NODE_PATH"));
  const npx = (args: string[], env: Record<string, string> = {}) => spawnSync("npx", ["--no-install", "phasekit", ...args], { cwd: app, encoding: "utf8", env: { ...userEnv, ...env } });
  const lastLine = (text: string) => text.trim().split("\n").at(-1) ?? "";

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), "phasekit-bin-pg-"));
    for (const p of ["core", "adapters-pi", "store-postgres"]) execFileSync(PNPM[0], [...PNPM[1], "pack", "--pack-destination", dir], { cwd: path.join(ROOT, "packages", p), stdio: "pipe" });
    const files = readdirSync(dir).map((f) => path.join(dir, f));
    tarballs = Object.fromEntries(["core", "adapters-pi", "store-postgres"].map((p) => [p, files.find((f) => f.includes(`-${p}-`)) as string]));
    app = path.join(dir, "app");
    mkdirSync(app);
    writeFileSync(path.join(app, "package.json"), JSON.stringify({ name: "app", private: true, version: "1.0.0" }));
    execFileSync("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", tarballs["core"] as string, tarballs["adapters-pi"] as string], { cwd: app, stdio: "pipe" });
    const store = await openPostgresPlanStore({ connectionString: cluster.url, namespace: "bin" });
    try {
      await runWorkflow({ repoRoot: dir, target: "shipped", toolName: "builder", store }, (ctx) => ctx.step("s", {}, () => 1));
    } finally {
      await store.close();
    }
  }, 240_000);
  afterAll(() => {
    cluster.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  describe("npx phasekit --store postgres://… from packed tarballs", () => {
    it("adapters-pi does not depend on the PostgreSQL package; without it, --store says which package to install", () => {
      const manifest = JSON.parse(readFileSync(path.join(app, "node_modules", "@phasekit", "adapters-pi", "package.json"), "utf8")) as Record<string, Record<string, string> | undefined>;
      for (const field of ["dependencies", "peerDependencies", "optionalDependencies"]) expect(Object.keys(manifest[field] ?? {})).not.toContain("@phasekit/store-postgres");
      const r = npx(["list", "--store", url]);
      expect(r.status).toBe(1);
      expect(lastLine(r.stderr)).toContain("a postgres:// store needs the package @phasekit/store-postgres, which is not installed");
      const json = npx(["list", "--json"], { PHASEKIT_STORE: url });
      expect(JSON.parse(lastLine(json.stderr))).toMatchObject({ schema: "phasekit.error/1", error: { code: "INVALID_CONFIG", details: { field: "store", value: "@phasekit/store-postgres" } }, exitCode: 1 });
    });

    it("with @phasekit/store-postgres installed beside it, list, show and journal read the server's runs", () => {
      execFileSync("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", tarballs["core"] as string, tarballs["adapters-pi"] as string, tarballs["store-postgres"] as string], { cwd: app, stdio: "pipe" });
      const list = npx(["list", "--store", url]);
      expect(list.status, list.stderr).toBe(0);
      expect(list.stdout).toMatch(/shipped\s+completed\s+builder/);
      const show = npx(["show", "shipped", "--json"], { PHASEKIT_STORE: url });
      expect(show.status, show.stderr).toBe(0);
      expect(JSON.parse(show.stdout)).toMatchObject({ summary: { id: "shipped", status: "completed", runDir: "postgres:bin/shipped" }, steps: [{ stepId: "s", status: "completed" }] });
      expect(npx(["journal", "shipped", "--store", url]).status).toBe(0);
    });
  });
}
