/** The two pi hosts the end-to-end tests run: 0.73.1 (devDependency, Node 20) and 1.5.2 (installed by .ci/setup-pi.sh, Node 22). */
import { execFileSync } from "node:child_process";
import * as path from "node:path";
import { devHost, type PiHost } from "../../../../examples/pi/pi-process.js";

const ROOT = path.resolve(import.meta.dirname, "..", "..", "..", "..");

/**
 * The file pi loads through the package's manifest: the bundle of the built default extension
 * (scripts/bundle-pi.mjs), rebuilt from dist/ when a test file first asks, so it is never older than `tsc -b`.
 */
export const EXTENSION_FILE = bundledExtension();

/** The unbundled built entry (what the `/pi` subpath gives extensions that compose the parts). */
export const UNBUNDLED_EXTENSION_FILE = path.join(ROOT, "packages", "adapters-pi", "dist", "pi", "default-extension.js");

function bundledExtension(): string {
  const pkg = path.join(ROOT, "packages", "adapters-pi");
  execFileSync(process.execPath, [path.join(pkg, "scripts", "bundle-pi.mjs")], { cwd: pkg, stdio: ["ignore", "ignore", "inherit"], timeout: 120_000 });
  return path.join(pkg, "dist", "pi", "extension.bundle.js");
}

/** Runs .ci/setup-pi.sh (idempotent) and returns the folder it filled. */
export function hostsDir(): string {
  return execFileSync(path.join(ROOT, ".ci", "setup-pi.sh"), { encoding: "utf8", timeout: 300_000, stdio: ["ignore", "pipe", "inherit"] }).trim().split("\n").pop() as string;
}

/** pi-workflows 1.0.0's extension entry, as published (installed by .ci/setup-pi.sh). */
export function piWorkflowsExtension(): string {
  return path.join(hostsDir(), "pi-workflows-1.0.0", "package", "src", "index.ts");
}

/** Installs (once) and returns pi 1.5.2 with its Node 22, from the npm registry. */
export function currentHost(): PiHost {
  const dir = hostsDir();
  return { name: "1.5.2", node: path.join(dir, "node22", "node_modules", ".bin", "node"), cli: path.join(dir, "pi-1.5.2", "package", "dist", "bundle", "cli.js") };
}

/** Both hosts, resolved lazily (the 1.5.2 install runs only when its tests run). */
export const HOSTS: ReadonlyArray<{ name: string; get: () => PiHost }> = [
  { name: "0.73.1", get: devHost },
  { name: "1.5.2", get: currentHost },
];
