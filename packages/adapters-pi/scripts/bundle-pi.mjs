#!/usr/bin/env node
/**
 * Builds dist/pi/extension.bundle.js, the one file pi loads through the package's `"pi"` manifest: the default
 * extension (dist/pi/default-extension.js, built by tsc) with @phasekit/core, zod and yaml inside it. pi's loader
 * (jiti) resolves and evaluates an extension module by module; the unbundled entry is ~190 modules and costs
 * ~180 ms of pi's start on a loaded machine, the bundle one file (docs/benchmarks.md). Left outside: the hosts
 * (type imports only), node's built-ins, proper-lockfile (loaded on the first lock, with its signal handlers kept
 * inert through its own module cache: lock/lockfile-loader.ts) and @phasekit/store-postgres (loaded only for a
 * postgres:// store). The `/pi` subpath stays unbundled, for extensions that compose the parts.
 * Written to a temp file and renamed, so a test process never loads a half-written bundle.
 */
import { renameSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const pkg = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const out = path.join(pkg, "dist", "pi", "extension.bundle.js");

const result = await build({
  entryPoints: [path.join(pkg, "dist", "pi", "default-extension.js")],
  bundle: true,
  write: false,
  platform: "node",
  format: "esm",
  target: "node20",
  external: ["proper-lockfile", "@phasekit/store-postgres", "@mariozechner/*", "@earendil-works/*"],
  // yaml's node build is CommonJS; in one ESM file its require() calls need a require.
  banner: { js: 'import { createRequire as __phasekitRequire } from "node:module";\nconst require = __phasekitRequire(import.meta.url);' },
  minifyWhitespace: true,
  minifySyntax: true,
  legalComments: "none",
  logLevel: "warning",
});
const file = result.outputFiles[0];
if (file === undefined) throw new Error("esbuild produced no output");
const tmp = `${out}.${process.pid}.tmp`;
writeFileSync(tmp, file.contents);
renameSync(tmp, out);
