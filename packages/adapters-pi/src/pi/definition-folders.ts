/**
 * The pi extension's view of workflow definitions: which folders to read (the global
 * `$PI_CODING_AGENT_DIR/workflows`, else `~/.pi/agent/workflows`, then the project's `<cwd>/.pi/workflows`, which
 * replaces a global workflow of the same key) and where each workflow came from. Reading and compiling the
 * folders (pi-workflows 1.0.0's format, problems with file and line) is `definitions/`, shared with the CLI.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { loadDefinitionFolders as loadFolders } from "../definitions/folders.js";
import type { WorkflowRegistry } from "./core-bridge.js";

/** One reason a definition was not loaded, pointing at the file and line. */
export interface DefinitionLoadProblem {
  readonly file: string;
  readonly line?: number;
  readonly workflowKey?: string;
  /** The text shown to the user (it names the file and line). */
  readonly message: string;
}

/** The loaded definitions. */
export interface LoadedDefinitions {
  readonly registry: WorkflowRegistry;
  readonly problems: readonly DefinitionLoadProblem[];
  /** Where each workflow came from (its workflow.yaml) and from which root. */
  readonly sources: ReadonlyMap<string, { file: string; scope: "global" | "project" }>;
}

/** Where to look. */
export interface DefinitionRoots {
  readonly global?: string;
  readonly project?: string;
}

/** The default roots for a session in `cwd`, as pi-workflows resolves them. */
export function defaultDefinitionRoots(cwd: string, env: NodeJS.ProcessEnv = process.env): DefinitionRoots {
  const agentDir = env["PI_CODING_AGENT_DIR"] ?? path.join(os.homedir(), ".pi", "agent");
  return { global: path.join(agentDir, "workflows"), project: path.join(cwd, ".pi", "workflows") };
}

function realDir(dir: string | undefined): string | undefined {
  if (dir === undefined) return undefined;
  try {
    return fs.realpathSync(dir);
  } catch {
    return undefined; // a missing root is normal: most users have only one of the two
  }
}

/**
 * A cheap fingerprint of what `loadDefinitionFolders` would read: every entry two levels under each root (the
 * workflow folders and their files) with its size and modification time. Equal signatures mean the folders
 * were not touched, so a session change can keep the loaded definitions (a few stats instead of YAML parsing).
 */
export function definitionFoldersSignature(roots: DefinitionRoots): string {
  const parts: string[] = [];
  const stat = (p: string): void => {
    try {
      const s = fs.statSync(p);
      parts.push(`${p}:${s.size}:${s.mtimeMs}`);
    } catch {
      parts.push(`${p}:-`);
    }
  };
  for (const root of [roots.global, roots.project]) {
    if (root === undefined) continue;
    stat(root);
    let dirs: fs.Dirent[];
    try {
      dirs = fs.readdirSync(root, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const d of dirs) {
      const dir = path.join(root, d.name);
      stat(dir);
      if (!d.isDirectory() && !d.isSymbolicLink()) continue;
      try {
        for (const f of fs.readdirSync(dir)) stat(path.join(dir, f));
      } catch {
        // not a folder (a symlink to a file): its own stat above covers it
      }
    }
  }
  return parts.join("\n");
}

/** Loads and compiles every workflow under the roots. Never throws. */
export function loadDefinitionFolders(roots: DefinitionRoots): LoadedDefinitions {
  const global = realDir(roots.global);
  const project = realDir(roots.project);
  const loaded = loadFolders([global, project].filter((d): d is string => d !== undefined));
  const problems = loaded.problems.map((p) => {
    const where = `${p.file}:${p.line}`;
    const text = p.message.includes(p.file) ? p.message : `${where}: ${p.message}`;
    return { file: p.file, line: p.line, workflowKey: p.workflowKey, message: p.hint ? `${text} (${p.hint})` : text };
  });
  const sources = new Map<string, { file: string; scope: "global" | "project" }>();
  for (const [key, file] of loaded.sources) {
    const scope = project !== undefined && file.startsWith(project + path.sep) ? "project" : "global";
    sources.set(key, { file, scope });
  }
  return { registry: loaded.registry, problems, sources };
}
