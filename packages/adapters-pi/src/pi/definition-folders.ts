/**
 * Workflow definitions from folders in pi-workflows 1.0.0's format, loaded unchanged: `<root>/<key>/workflow.yaml`
 * lists phase Markdown files (front matter + instructions) and `{ subworkflow: key }` references. Roots: the
 * global `$PI_CODING_AGENT_DIR/workflows` (else `~/.pi/agent/workflows`) and the project's `<cwd>/.pi/workflows`;
 * a project workflow replaces a global one of the same key. A broken workflow is reported (file and line) and
 * left out; the others still load.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { compile, type WorkflowRegistry } from "./core-bridge.js";
import { parseFrontMatter, parseYamlText } from "./front-matter.js";

/** One reason a definition was not loaded, pointing at the file (and line when known). */
export interface DefinitionLoadProblem {
  readonly file: string;
  readonly line?: number;
  readonly workflowKey?: string;
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

const MAX_FILE_BYTES = 512 * 1024;
const WORKFLOW_FILE = "workflow.yaml";

/** The default roots for a session in `cwd`, as pi-workflows resolves them. */
export function defaultDefinitionRoots(cwd: string, env: NodeJS.ProcessEnv = process.env): DefinitionRoots {
  const agentDir = env["PI_CODING_AGENT_DIR"] ?? path.join(os.homedir(), ".pi", "agent");
  return { global: path.join(agentDir, "workflows"), project: path.join(cwd, ".pi", "workflows") };
}

/** Loads and compiles every workflow under the roots. Never throws. */
export function loadDefinitionFolders(roots: DefinitionRoots): LoadedDefinitions {
  const problems: DefinitionLoadProblem[] = [];
  const raw = new Map<string, unknown>();
  const sources = new Map<string, { file: string; scope: "global" | "project" }>();
  for (const scope of ["global", "project"] as const) {
    const root = roots[scope];
    if (root === undefined) continue;
    for (const found of readRoot(root, problems)) {
      raw.set(found.key, found.def);
      sources.set(found.key, { file: found.file, scope });
    }
  }
  const compiled = compile(Object.fromEntries(raw));
  for (const p of compiled.problems) {
    const key = p.workflowKey;
    const file = key === undefined ? "(definitions)" : (sources.get(key)?.file ?? key);
    problems.push({ file, workflowKey: key, message: `${p.message}${p.hint ? ` (${p.hint})` : ""}` });
  }
  return { registry: compiled.registry, problems, sources };
}

interface FoundWorkflow {
  key: string;
  file: string;
  def: Record<string, unknown>;
}

function readRoot(root: string, problems: DefinitionLoadProblem[]): FoundWorkflow[] {
  let realRoot: string;
  let entries: fs.Dirent[];
  try {
    realRoot = fs.realpathSync(root);
    entries = fs.readdirSync(realRoot, { withFileTypes: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") problems.push({ file: root, message: `cannot read the workflows folder: ${(error as Error).message}` });
    return [];
  }
  const out: FoundWorkflow[] = [];
  for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    if (!entry.isDirectory()) continue;
    const dir = path.join(realRoot, entry.name);
    const file = path.join(dir, WORKFLOW_FILE);
    if (!fs.existsSync(file)) continue;
    const def = readWorkflow(entry.name, dir, file, realRoot, problems);
    if (def !== undefined) out.push({ key: entry.name, file, def });
  }
  return out;
}

/** A regular file inside `realRoot`, read as UTF-8; anything else (symlink out, FIFO, huge) is a problem. */
function readInside(file: string, realRoot: string, shown: string, problems: DefinitionLoadProblem[]): string | undefined {
  try {
    const real = fs.realpathSync(file);
    if (!real.startsWith(realRoot + path.sep)) {
      problems.push({ file: shown, message: `resolves to ${real}, outside the workflows folder ${realRoot}; phase files must stay inside it` });
      return undefined;
    }
    const st = fs.statSync(real);
    if (!st.isFile()) {
      problems.push({ file: shown, message: "is not a regular file" });
      return undefined;
    }
    if (st.size > MAX_FILE_BYTES) {
      problems.push({ file: shown, message: `is ${st.size} bytes; definition files are limited to ${MAX_FILE_BYTES}` });
      return undefined;
    }
    return fs.readFileSync(real, "utf8");
  } catch (error) {
    problems.push({ file: shown, message: `cannot be read: ${(error as Error).message}` });
    return undefined;
  }
}

const COPIED_FIELDS = [
  "name",
  "description",
  "commandName",
  "initialMessage",
  "loopable",
  "maxLoops",
  "sessionNamePrefix",
  "sessionNameMaxLength",
  "roleInstruction",
  "advanceReminder",
  "blockReasonTemplate",
  "completionMessage",
  "cancelledMessage",
  "notDoneReminder",
  "profiles",
] as const;

function readWorkflow(key: string, dir: string, file: string, realRoot: string, problems: DefinitionLoadProblem[]): Record<string, unknown> | undefined {
  const text = readInside(file, realRoot, file, problems);
  if (text === undefined) return undefined;
  const parsed = parseYamlText(text);
  if (!parsed.ok) {
    problems.push({ file, line: parsed.line, workflowKey: key, message: `YAML error: ${parsed.reason}` });
    return undefined;
  }
  const y = parsed.value;
  if (typeof y !== "object" || y === null || Array.isArray(y)) {
    problems.push({ file, line: 1, workflowKey: key, message: "must be a YAML mapping (name, commandName, phases …)" });
    return undefined;
  }
  const doc = y as Record<string, unknown>;
  const def: Record<string, unknown> = {};
  for (const field of COPIED_FIELDS) if (Object.hasOwn(doc, field) && doc[field] !== null) def[field] = doc[field];
  // pi-workflows: show "workflows" = usable only inside other workflows; phasekit: show false.
  if (Object.hasOwn(doc, "show")) def["show"] = typeof doc["show"] === "boolean" ? doc["show"] : doc["show"] !== "workflows";
  if (!Array.isArray(doc["phases"])) {
    problems.push({ file, workflowKey: key, message: "phases: expected a list of phase files or { subworkflow: key } entries" });
    return undefined;
  }
  const phases: unknown[] = [];
  for (const [i, entry] of (doc["phases"] as unknown[]).entries()) {
    const phase = readPhaseEntry(entry, i, key, dir, file, realRoot, problems);
    if (phase === undefined) return undefined;
    phases.push(phase);
  }
  def["phases"] = phases;
  return def;
}

function readPhaseEntry(entry: unknown, i: number, key: string, dir: string, file: string, realRoot: string, problems: DefinitionLoadProblem[]): unknown {
  if (typeof entry === "object" && entry !== null && !Array.isArray(entry)) return entry; // a reference; core checks it
  if (typeof entry !== "string" || entry === "") {
    problems.push({ file, workflowKey: key, message: `phases[${i}]: expected a phase file name or { subworkflow: key }` });
    return undefined;
  }
  const phaseFile = path.resolve(dir, entry);
  const text = readInside(phaseFile, realRoot, phaseFile, problems);
  if (text === undefined) return undefined;
  const fm = parseFrontMatter(text);
  if (!fm.ok) {
    problems.push({ file: phaseFile, line: fm.line, workflowKey: key, message: `front matter: ${fm.reason}` });
    return undefined;
  }
  const d = fm.data;
  const phase: Record<string, unknown> = { id: d["id"], name: d["name"], emoji: d["emoji"] ?? "", instructions: fm.body.trim() };
  const tools = d["tools"];
  if (typeof tools === "object" && tools !== null && !Array.isArray(tools)) {
    const t = tools as Record<string, unknown>;
    const rules: Record<string, unknown> = {};
    if (Array.isArray(t["blacklist"])) rules["blacklist"] = t["blacklist"].map(String);
    if (Array.isArray(t["whitelist"])) rules["whitelist"] = t["whitelist"].map(String);
    if (Object.keys(rules).length > 0) phase["tools"] = rules;
  }
  if (Array.isArray(d["availableProfiles"])) phase["availableProfiles"] = d["availableProfiles"].map(String);
  return phase;
}
