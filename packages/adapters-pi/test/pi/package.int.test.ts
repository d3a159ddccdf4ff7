/**
 * The extension as pi users install it: both packages packed (prepack builds), installed with npm into a fresh
 * project outside the workspace, and loaded by each host from the package folder through its
 * `"pi": { "extensions": [...] }` manifest; then the example scenario runs end to end.
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runShipScenario } from "../../../../examples/pi/ship-scenario.js";
import { HOSTS } from "./hosts.js";

const ROOT = path.resolve(import.meta.dirname, "..", "..", "..", "..");
const EXEC = process.env["npm_execpath"];
const PNPM: [string, string[]] = EXEC && /pnpm/.test(EXEC) ? [process.execPath, [EXEC]] : ["pnpm", []];
let dir = "";
let pkgDir = "";

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "phasekit-pi-pack-"));
  for (const p of ["core", "adapters-pi"]) {
    execFileSync(PNPM[0], [...PNPM[1], "pack", "--pack-destination", dir], { cwd: path.join(ROOT, "packages", p), stdio: "pipe" });
  }
  const app = path.join(dir, "app");
  fs.mkdirSync(app);
  fs.writeFileSync(path.join(app, "package.json"), JSON.stringify({ name: "app", private: true, version: "1.0.0" }));
  const tgz = fs.readdirSync(dir).filter((f) => f.endsWith(".tgz")).map((f) => path.join(dir, f));
  execFileSync("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", ...tgz], { cwd: app, stdio: "pipe" });
  pkgDir = path.join(app, "node_modules", "@phasekit", "adapters-pi");
}, 240_000);
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe("the installed package", () => {
  it("declares the pi manifest, the keyword, the hosts and OpenTelemetry only as optional peers, zod as a peer", () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(pkgDir, "package.json"), "utf8")) as Record<string, Record<string, unknown> & unknown[]>;
    // The bundle (scripts/bundle-pi.mjs, built by prepack): one file for pi's loader instead of ~190 modules.
    expect(pkg["pi"]).toEqual({ extensions: ["./dist/pi/extension.bundle.js"] });
    expect(pkg["keywords"]).toContain("pi-package");
    // The hosts and OpenTelemetry's API are optional peers; zod is the one required peer (one copy with the consumer's).
    expect(Object.keys(pkg["peerDependencies"] ?? {}).sort()).toEqual(["@earendil-works/pi-coding-agent", "@mariozechner/pi-coding-agent", "@opentelemetry/api", "zod"]);
    expect(pkg["peerDependenciesMeta"]).toEqual({ "@earendil-works/pi-coding-agent": { optional: true }, "@mariozechner/pi-coding-agent": { optional: true }, "@opentelemetry/api": { optional: true } });
    expect(JSON.stringify(pkg["dependencies"])).not.toMatch(/pi-coding-agent/);
    // No run-time import of a host anywhere in the shipped extension.
    const built = fs.readdirSync(path.join(pkgDir, "dist", "pi")).filter((f) => f.endsWith(".js"));
    for (const f of built) expect(fs.readFileSync(path.join(pkgDir, "dist", "pi", f), "utf8"), f).not.toMatch(/from ["']@(mariozechner|earendil-works)\//);
  });

  it.each(HOSTS)("pi $name loads it through the manifest and runs the example end to end", async ({ get }) => {
    const r = await runShipScenario({ host: get(), extension: pkgDir });
    expect(r.statuses[1]?.[0]).toBe("Ship a change > Check [2/3] > 🧪 Test [1/2]");
    expect(r.session.filter((e) => e["type"] === "custom_message" && e["customType"] === "workflow:complete")).toHaveLength(1);
  }, 300_000);
});
