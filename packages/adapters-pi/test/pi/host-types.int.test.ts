/**
 * The extension's structural host types against pi 1.5.2's own declarations (0.73.1's are checked by
 * `pnpm typecheck` through sdk.int.test.ts): `createWorkflowExtension()` is an `ExtensionFactory` of 1.5.2,
 * and the check is real (a wrong factory is refused).
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { hostsDir } from "./hosts.js";

const ROOT = path.resolve(import.meta.dirname, "..", "..", "..", "..");
let dir = "";
let declarations = "";
beforeAll(() => {
  declarations = path.join(hostsDir(), "pi-1.5.2", "package", "dist", "index.d.ts");
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "phasekit-pi-types-"));
}, 300_000);
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function typecheck(body: string): { status: number | null; out: string } {
  const src = path.join(ROOT, "packages", "adapters-pi", "src", "pi", "index.js");
  fs.writeFileSync(path.join(dir, "check.ts"), `import type { ExtensionFactory } from "@earendil-works/pi-coding-agent";\nimport { createWorkflowExtension } from ${JSON.stringify(src)};\n${body}\n`);
  const config = {
    compilerOptions: {
      target: "ES2022",
      module: "NodeNext",
      moduleResolution: "NodeNext",
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      types: ["node"],
      typeRoots: [path.join(ROOT, "node_modules", "@types")],
      customConditions: ["@phasekit/source"],
      paths: { "@earendil-works/pi-coding-agent": [declarations] },
    },
    files: ["check.ts"],
  };
  fs.writeFileSync(path.join(dir, "tsconfig.json"), JSON.stringify(config));
  const r = spawnSync(process.execPath, [path.join(ROOT, "node_modules", "typescript", "bin", "tsc"), "-p", dir], { encoding: "utf8" });
  return { status: r.status, out: r.stdout + r.stderr };
}

it("createWorkflowExtension() is a pi 1.5.2 ExtensionFactory; a mismatched factory is refused", () => {
  const good = typecheck("const f: ExtensionFactory = createWorkflowExtension();\nvoid f;");
  expect(good.out).toBe("");
  expect(good.status).toBe(0);
  const bad = typecheck("void createWorkflowExtension;\nconst g: ExtensionFactory = (pi: { nope: string }) => void pi;\nvoid g;");
  expect(bad.out).toContain("Property 'nope' is missing in type 'ExtensionAPI'");
}, 120_000);
