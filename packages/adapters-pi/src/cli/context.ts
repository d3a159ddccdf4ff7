/** The options every command shares (`--repo`, `--plan-root`, `--store`, `--json`, `--defs`) turned into what commands use. */
import { existsSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Command } from "commander";
import { EXIT, CliFailure, usage, type CliIo } from "./io.js";
import type { Roots } from "./run-view.js";
import { parseStoreUrl, STORE_ENV } from "../store/store-url.js";

/** The shared options after parsing. */
export interface Common {
  roots: Roots;
  json: boolean;
  /** Definition folders given with --defs, else the default roots that exist. */
  defDirs: string[];
}

/** Reads the shared options of `cmd`; a `--repo` that is not a folder is NOT_FOUND (never a silent empty list). */
export function common(cmd: Command, io: CliIo): Common {
  const o = cmd.optsWithGlobals<{ repo?: string; planRoot?: string; json?: boolean; defs?: string[]; store?: string }>();
  const repoRoot = path.resolve(io.cwd, o.repo ?? ".");
  if (!isDir(repoRoot)) {
    throw new CliFailure({ code: "NOT_FOUND", message: `--repo ${repoRoot} is not a folder` }, EXIT.notFound);
  }
  const roots: Roots = { repoRoot, ...(o.planRoot === undefined ? {} : { planRoot: path.resolve(io.cwd, o.planRoot) }) };
  // A flag wins over the environment: --store, else --plan-root, else PHASEKIT_STORE (empty: the plan folder).
  // Only the two flags together name two places for runs.
  if (o.store !== undefined && o.planRoot !== undefined) usage("--plan-root and --store name two places for runs: give one.", { field: "store" });
  const fromEnv = o.planRoot === undefined && io.env[STORE_ENV] !== "" ? io.env[STORE_ENV] : undefined;
  const storeText = o.store ?? fromEnv;
  if (storeText !== undefined) {
    try {
      roots.store = parseStoreUrl(storeText, o.store === undefined ? STORE_ENV : "--store");
    } catch (error) {
      const e = error as { message: string; details?: Record<string, unknown> };
      usage(e.message.replace(/^(\[[^\]]*\] )+/, ""), e.details ?? {});
    }
  }
  const defDirs = o.defs !== undefined && o.defs.length > 0 ? o.defs.map((d) => path.resolve(io.cwd, d)) : defaultDefinitionDirs(repoRoot, io.env).filter(isDir);
  return { roots, json: o.json === true, defDirs };
}

/** pi-workflows' roots: the global `$PI_CODING_AGENT_DIR/workflows` (else `~/.pi/agent/workflows`), then `<repo>/.pi/workflows`. */
export function defaultDefinitionDirs(repoRoot: string, env: NodeJS.ProcessEnv): string[] {
  const agentDir = env["PI_CODING_AGENT_DIR"] ?? path.join(os.homedir(), ".pi", "agent");
  return [path.join(agentDir, "workflows"), path.join(repoRoot, ".pi", "workflows")];
}

function isDir(p: string): boolean {
  return existsSync(p) && statSync(p).isDirectory();
}
