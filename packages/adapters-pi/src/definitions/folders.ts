/**
 * Workflow definitions from folders in pi-workflows 1.0.0's format, loaded unchanged: `<dir>/<key>/workflow.yaml`
 * lists phase Markdown files (front matter + instructions) and `{ subworkflow: key }` references. Every problem,
 * including those core's compiler finds, points at a file and a line. Shared by the CLI (`phasekit validate`,
 * `diagram`) and meant for the pi extension too, so that both read one format one way.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { compileDefinitions, type WorkflowErrorCode, type WorkflowRegistry } from "@phasekit/core";
import { parseFrontMatter } from "./front-matter.js";
import { phaseFields, referenceEntry, workflowFields, type IgnoredField } from "./pi-fields.js";
import { parseYamlSource } from "./yaml-source.js";

/** One thing wrong with a definition folder: where (file, 1-based line) and what. */
export interface DefinitionFileProblem {
  readonly file: string;
  readonly line: number;
  /** PATH_OUTSIDE_ROOT, READ_FAILED (not a regular file, too large, unreadable), INVALID_DEFINITION (YAML or shape), or a compiler code. */
  readonly code: WorkflowErrorCode;
  readonly message: string;
  readonly hint?: string;
  readonly workflowKey?: string;
  /** "warning": told once, the workflow still loads (a field pi-workflows ignores too, a shared command name). */
  readonly severity?: "warning";
}

/** The workflows found, compiled, with every problem and where each workflow came from. */
export interface LoadedDefinitionFolders {
  readonly registry: WorkflowRegistry;
  readonly problems: readonly DefinitionFileProblem[];
  /** Workflow key → its workflow.yaml. */
  readonly sources: ReadonlyMap<string, string>;
  /** How many workflow folders were read. */
  readonly folders: number;
}

/** The file name that makes a folder a workflow. */
export const WORKFLOW_FILE = "workflow.yaml";
/** Definition files above this size are refused (a typo'd path to a log file must not be read into memory). */
export const MAX_DEFINITION_FILE_BYTES = 512 * 1024;

type LineOf = (path: readonly (string | number)[]) => number;
interface Source {
  file: string;
  lineOf: LineOf;
  /** Per phase index: the phase file and its front-matter lines, when the entry is a file. */
  phases: Map<number, { file: string; lineOf: LineOf; bodyLine: number }>;
  /** The lines of workflow.yaml, to find where a block scalar's text starts. */
  lines: readonly string[];
}

/**
 * Loads every workflow under `dirs`. A dir holding `workflow.yaml` is one workflow (its key: the folder name);
 * otherwise each sub-folder holding one is. A later dir's workflow replaces an earlier one of the same key (as a
 * project folder overrides the global one). Never throws; `onFolder` reports progress.
 */
export function loadDefinitionFolders(dirs: readonly string[], options: { onFolder?: (done: number) => void } = {}): LoadedDefinitionFolders {
  const problems: DefinitionFileProblem[] = [];
  const raw = new Map<string, unknown>();
  const sources = new Map<string, Source>();
  let folders = 0;
  for (const dir of dirs) {
    for (const found of workflowFolders(dir, problems)) {
      folders++;
      options.onFolder?.(folders);
      const read = readWorkflow(found.key, found.dir, found.root, problems);
      if (read === undefined) continue;
      raw.set(found.key, read.def);
      sources.set(found.key, read.source);
    }
  }
  // The healthy workflows load; every one left out is a listed problem.
  const compiled = compileDefinitions(Object.fromEntries(raw), { keepHealthy: true });
  for (const p of compiled.problems) problems.push(locate(p, sources));
  const empty = compileDefinitions({});
  const registry = compiled.ok ? compiled.registry : empty.ok ? empty.registry : (undefined as never);
  return { registry, problems, sources: new Map([...sources].map(([k, s]) => [k, s.file])), folders };
}

function workflowFolders(dir: string, problems: DefinitionFileProblem[]): Array<{ key: string; dir: string; root: string }> {
  let real: string;
  try {
    real = fs.realpathSync(dir);
    if (!fs.statSync(real).isDirectory()) throw Object.assign(new Error("not a folder"), { code: "ENOTDIR" });
  } catch (error) {
    problems.push({ file: dir, line: 1, code: "READ_FAILED", message: `${dir} is not a readable folder: ${(error as Error).message}` });
    return [];
  }
  if (fs.existsSync(path.join(real, WORKFLOW_FILE))) return [{ key: path.basename(real), dir: real, root: real }];
  const out: Array<{ key: string; dir: string; root: string }> = [];
  const names = fs.readdirSync(real, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name);
  for (const name of names.sort()) {
    if (fs.existsSync(path.join(real, name, WORKFLOW_FILE))) out.push({ key: name, dir: path.join(real, name), root: real });
  }
  return out;
}

/** A regular file inside `root`, read as UTF-8; anything else (a link out, a FIFO, a huge file) is a problem. */
function readInside(file: string, root: string, problems: DefinitionFileProblem[], workflowKey: string): string | undefined {
  const problem = (code: WorkflowErrorCode, message: string) => problems.push({ file, line: 1, code, message: `${file} ${message}`, workflowKey });
  try {
    const real = fs.realpathSync(file);
    if (real !== root && !real.startsWith(root + path.sep)) return void problem("PATH_OUTSIDE_ROOT", `resolves to ${real}, outside ${root}; definition files must stay inside it`);
    const st = fs.statSync(real);
    if (!st.isFile()) return void problem("READ_FAILED", "is not a regular file");
    if (st.size > MAX_DEFINITION_FILE_BYTES) return void problem("READ_FAILED", `is ${st.size} bytes; definition files are limited to ${MAX_DEFINITION_FILE_BYTES}`);
    return fs.readFileSync(real, "utf8");
  } catch (error) {
    return void problem("READ_FAILED", `cannot be read: ${(error as Error).message}`);
  }
}

function ignoredWarnings(file: string, lineOf: LineOf, key: string, ignored: readonly IgnoredField[], problems: DefinitionFileProblem[]): void {
  for (const f of ignored) {
    const line = lineOf(f.path);
    problems.push({ file, line, code: "INVALID_DEFINITION", message: `${file}:${line}: ${f.reason}`, workflowKey: key, severity: "warning" });
  }
}

function readWorkflow(key: string, dir: string, root: string, problems: DefinitionFileProblem[]): { def: Record<string, unknown>; source: Source } | undefined {
  const file = path.join(dir, WORKFLOW_FILE);
  const text = readInside(file, root, problems, key);
  if (text === undefined) return undefined;
  const parsed = parseYamlSource(text);
  if (!parsed.ok) return void problems.push({ file, line: parsed.line, code: "INVALID_DEFINITION", message: `${file}:${parsed.line}: ${parsed.reason}`, workflowKey: key });
  const doc = parsed.value;
  if (typeof doc !== "object" || doc === null || Array.isArray(doc)) {
    return void problems.push({ file, line: 1, code: "INVALID_DEFINITION", message: `${file} must be a YAML mapping (name, phases …)`, workflowKey: key });
  }
  const y = doc as Record<string, unknown>;
  const ignored: IgnoredField[] = [];
  const def = workflowFields(y, ignored);
  ignoredWarnings(file, parsed.lineOf, key, ignored, problems);
  const source: Source = { file, lineOf: parsed.lineOf, phases: new Map(), lines: text.split("\n") };
  if (!Array.isArray(y["phases"])) {
    const line = parsed.lineOf(["phases"]);
    return void problems.push({ file, line, code: "INVALID_DEFINITION", message: `${file}:${line}: phases must be a list of phase files or { subworkflow: key } entries`, workflowKey: key });
  }
  const phases: unknown[] = [];
  for (const [i, entry] of (y["phases"] as unknown[]).entries()) {
    if (typeof entry === "object" && entry !== null) {
      // A reference, read as pi-workflows reads it; anything else goes to core, which names the path.
      phases.push(Array.isArray(entry) ? entry : (referenceEntry(entry as Record<string, unknown>) ?? entry));
      continue;
    }
    const line = parsed.lineOf(["phases", i]);
    if (typeof entry !== "string" || entry === "") {
      return void problems.push({ file, line, code: "INVALID_DEFINITION", message: `${file}:${line}: phases[${i}] must be a phase file name or { subworkflow: key }`, workflowKey: key });
    }
    const phaseFile = path.resolve(dir, entry);
    const phaseText = readInside(phaseFile, root, problems, key);
    if (phaseText === undefined) return undefined;
    const fm = parseFrontMatter(phaseText);
    if (!fm.ok) return void problems.push({ file: phaseFile, line: fm.line, code: "INVALID_DEFINITION", message: `${phaseFile}:${fm.line}: front matter: ${fm.reason}`, workflowKey: key });
    // Instructions are the body trimmed: their line 1 is the body's first line that is not blank.
    const leading = fm.body.slice(0, fm.body.length - fm.body.trimStart().length).split("\n").length - 1;
    source.phases.set(i, { file: phaseFile, lineOf: fm.lineOf, bodyLine: fm.bodyLine + leading });
    const phaseIgnored: IgnoredField[] = [];
    phases.push(phaseFields(fm.data, fm.body, phaseIgnored));
    ignoredWarnings(phaseFile, fm.lineOf, key, phaseIgnored, problems);
  }
  def["phases"] = phases;
  return { def, source };
}

type CoreProblem = { code: WorkflowErrorCode; path: string; message: string; hint: string; workflowKey?: string; severity?: "warning"; line?: number };

/** Points a compiler problem (`ship.phases[2].id`) at the file and line it came from. */
function locate(p: CoreProblem, sources: ReadonlyMap<string, Source>): DefinitionFileProblem {
  const segments = splitPath(p.path);
  const key = p.workflowKey ?? (typeof segments[0] === "string" ? segments[0] : undefined);
  const severity = p.severity === undefined ? {} : { severity: p.severity };
  const source = key === undefined ? undefined : sources.get(key);
  if (source === undefined) return { file: "(definitions)", line: 1, code: p.code, message: p.message, hint: p.hint, ...(key ? { workflowKey: key } : {}), ...severity };
  const rest = segments.slice(1);
  let file = source.file;
  let line = source.lineOf(rest);
  const phase = rest[0] === "phases" && typeof rest[1] === "number" ? source.phases.get(rest[1]) : undefined;
  if (phase !== undefined) {
    file = phase.file;
    line = rest[2] === "instructions" ? phase.bodyLine + (p.line ?? 1) - 1 : phase.lineOf(rest.slice(2));
  } else if (p.line !== undefined) {
    // A text field: a block scalar (`field: |`) starts on the next line, a plain one on the key's line.
    const block = /:\s*[|>][-+0-9]*\s*(#.*)?$/.test(source.lines[line - 1] ?? "");
    line += p.line - 1 + (block ? 1 : 0);
  }
  return { file, line, code: p.code, message: p.message, hint: p.hint, workflowKey: key as string, ...severity };
}

function splitPath(text: string): Array<string | number> {
  const out: Array<string | number> = [];
  for (const m of text.matchAll(/([^.[\]]+)|\[(\d+)\]|\["((?:[^"\\]|\\.)*)"\]/g)) {
    if (m[2] !== undefined) out.push(Number(m[2]));
    else if (m[3] !== undefined) out.push(JSON.parse(`"${m[3]}"`) as string);
    else if (m[1] !== undefined) out.push(m[1]);
  }
  return out;
}
