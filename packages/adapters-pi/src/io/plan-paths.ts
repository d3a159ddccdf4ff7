/**
 * Where the plan folder lives and which names may appear in it. Every path the store touches is built by
 * `resolveInside`, which refuses anything that could land outside the plan root: traversal (also URL-encoded),
 * absolute paths, names Windows would reinterpret, and symlinks on the way.
 */
import path from "node:path";
import { workflowError, type Result, type WorkflowError } from "@phasekit/core";
import { fsErrorCode, nodeFs, type FsPort } from "./fs-port.js";

/** Mode of every directory the store creates: only the owner may list or enter it. */
export const DIR_MODE = 0o700;
/** Mode of every file the store writes: only the owner may read it. */
export const FILE_MODE = 0o600;
/** Longest name accepted for one path segment (slugs, step ids, file names). */
export const MAX_SEGMENT_LENGTH = 128;

const SCOPE = "paths";
const SLUG = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
// Step ids are record keys, not file names (artifacts are content-addressed), so `:` is allowed as in `plan:3`.
const STEP_ID = /^[A-Za-z0-9_][A-Za-z0-9._:@-]*$/;
const WINDOWS_RESERVED = /^(con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³]|conin\$|conout\$)$/i;
const WINDOWS_FORBIDDEN = /[<>:"|?*\\]/;
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;

/** Options of `resolvePlanRoot`. */
export interface PlanRootOptions {
  repoRoot: string;
  /** `~` and `~/x` expand to `homeDir`; a relative path resolves against `repoRoot`. Default `ai_plan`. */
  planRoot?: string | undefined;
  homeDir?: string | undefined;
}

/** The absolute plan root: `<repoRoot>/ai_plan` unless configured. Throws INVALID_OPTIONS for an unusable value. */
export function resolvePlanRoot(options: PlanRootOptions): string {
  const { repoRoot, planRoot = "ai_plan", homeDir } = options;
  if (typeof repoRoot !== "string" || repoRoot === "" || repoRoot.includes("\0")) {
    throw optionError("repoRoot", repoRoot, "pass the absolute path of the repository");
  }
  if (typeof planRoot !== "string" || planRoot === "" || planRoot.includes("\0")) {
    throw optionError("planRoot", planRoot, "pass a folder path such as ai_plan or ~/plans");
  }
  let raw = planRoot;
  if (raw === "~" || raw.startsWith("~/")) {
    if (homeDir === undefined || homeDir === "") throw optionError("homeDir", homeDir, "pass homeDir to expand ~ in planRoot");
    raw = path.join(homeDir, raw.slice(1));
  }
  return path.resolve(path.resolve(repoRoot), raw);
}

/** Checks a run's slug (one folder name under the plan root); the error says why the value was refused. */
export function validateSlug(value: unknown): Result<{ slug: string }> {
  const why = nameProblem(value, SLUG, "letters, digits, '.', '_' and '-', starting with a letter or digit");
  if (why !== undefined) return { ok: false, error: invalidName("slug", value, why) };
  return { ok: true, slug: value as string };
}

/** Checks a step id (a checkpoint key such as `plan` or `review:2`); the error says why the value was refused. */
export function validateStepId(value: unknown): Result<{ stepId: string }> {
  const why = nameProblem(value, STEP_ID, "letters, digits and '.', '_', '-', ':', '@'");
  if (why !== undefined) return { ok: false, error: invalidName("step id", value, why) };
  return { ok: true, stepId: value as string };
}

/** Like `validateSlug`, but throws the INVALID_SLUG error. */
export function assertSlug(value: unknown): string {
  const r = validateSlug(value);
  if (!r.ok) throw r.error;
  return r.slug;
}

/** True when `candidate` is `root` or lies below it (`/x/ai_plan-evil` is not inside `/x/ai_plan`). */
export function isInside(root: string, candidate: string): boolean {
  const rel = path.relative(path.resolve(root), path.resolve(candidate));
  return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel));
}

/** `resolveInside` with the real file system. */
export function resolveInside(root: string, ...segments: string[]): Promise<string> {
  return resolveInsideWith(nodeFs, root, segments);
}

/**
 * Joins `segments` (each may hold `/`-separated parts) below `root`, refusing every part that could escape it
 * and every existing symlink between the root and the result. Throws PATH_OUTSIDE_ROOT or INVALID_SLUG.
 */
export async function resolveInsideWith(fs: FsPort, root: string, segments: readonly string[]): Promise<string> {
  const base = path.resolve(root);
  const parts: string[] = [];
  for (const segment of segments) {
    if (typeof segment !== "string") throw outside(base, String(segment), "a path segment must be a string");
    if (segment.startsWith("/") || /^[A-Za-z]:/.test(segment)) throw outside(base, segment, "absolute paths are not allowed");
    for (const part of segment.split("/")) parts.push(checkPart(base, segment, part));
  }
  const full = path.join(base, ...parts);
  if (!isInside(base, full)) throw outside(base, full, "the path leaves the plan root");
  await refuseSymlinks(fs, base, parts);
  return full;
}

/** Creates `dir` (and missing parents) with mode 0700; throws PATH_OUTSIDE_ROOT if it is a symlink or not a folder. */
export async function ensurePrivateDir(dir: string, options: { fs?: FsPort } = {}): Promise<void> {
  const fs = options.fs ?? nodeFs;
  try {
    await fs.mkdir(dir, { recursive: true, mode: DIR_MODE });
  } catch (error) {
    const code = fsErrorCode(error);
    // A file (or a dangling symlink) where the folder or one of its parents should be.
    if (code === "EEXIST" || code === "ENOTDIR") {
      throw workflowError(SCOPE, "UNSAFE_FILE", `${dir} cannot be created: a file is in the way (${code}).`, {
        file: dir,
        errno: code,
        hint: "move the file away by hand (it was left as it is), then retry",
      }, error);
    }
    throw workflowError(SCOPE, "WRITE_FAILED", `cannot create ${dir}: ${String(error)}`, { file: dir, errno: code }, error);
  }
  const st = await fs.lstat(dir);
  if (!st.isDirectory()) {
    throw workflowError(SCOPE, "PATH_OUTSIDE_ROOT", `${dir} is not a real folder (a symlink or a file is in the way).`, {
      file: dir,
      hint: "remove the symlink or file and retry",
    });
  }
}

function checkPart(root: string, segment: string, part: string): string {
  if (part === "." || part === "..") throw outside(root, segment, `'${part}' would leave the folder`);
  if (part.includes("%")) {
    let decoded: string;
    try {
      decoded = decodeURIComponent(part);
    } catch {
      throw invalidName("path segment", segment, "it holds a malformed %-escape");
    }
    // Another layer decodes the name later (a URL, a shell): the decoded form must be just as safe.
    if (decoded !== part) {
      if (decoded.includes("/") || decoded.includes("\\")) throw outside(root, segment, "it decodes to a path separator");
      checkPart(root, segment, decoded);
    }
  }
  const why = nameProblem(part, undefined, "");
  if (why !== undefined) throw invalidName("path segment", segment, why);
  return part;
}

async function refuseSymlinks(fs: FsPort, root: string, parts: readonly string[]): Promise<void> {
  let current = root;
  for (const part of parts) {
    current = path.join(current, part);
    let isLink: boolean;
    try {
      isLink = (await fs.lstat(current)).isSymbolicLink();
    } catch (error) {
      if (fsErrorCode(error) === "ENOENT") return;
      throw workflowError(SCOPE, "READ_FAILED", `cannot inspect ${current}: ${String(error)}`, { file: current }, error);
    }
    if (isLink) throw outside(root, current, "it is a symlink, which could point anywhere");
  }
}

function nameProblem(value: unknown, shape: RegExp | undefined, shapeText: string): string | undefined {
  if (typeof value !== "string") return `it is ${value === null ? "null" : typeof value}, not a string`;
  if (value === "") return "it is empty";
  if (value.length > MAX_SEGMENT_LENGTH) return `it is ${value.length} characters long (at most ${MAX_SEGMENT_LENGTH})`;
  if (CONTROL.test(value)) return "it holds a NUL or control character";
  if (value === "." || value === "..") return `'${value}' is a relative folder reference`;
  if (shape === undefined && WINDOWS_FORBIDDEN.test(value)) return "it holds one of < > : \" | ? * \\ (an alternate stream or drive on Windows)";
  if (shape === undefined && value.startsWith("~")) return "a leading '~' is expanded by shells";
  if (/[. ]$/.test(value)) return "it ends with '.' or a space, which Windows strips";
  if (WINDOWS_RESERVED.test(value.split(".")[0] ?? "")) return `'${value}' is a reserved device name on Windows`;
  if (shape !== undefined && !shape.test(value)) return `it may only hold ${shapeText}`;
  return undefined;
}

function invalidName(what: string, value: unknown, why: string): WorkflowError {
  return workflowError(SCOPE, "INVALID_SLUG", `${what} ${JSON.stringify(String(value)).slice(0, 160)} is refused: ${why}.`, {
    field: what,
    value,
    hint: "use a short name of letters, digits, '-' and '_'",
  });
}

function outside(root: string, value: string, why: string): WorkflowError {
  return workflowError(SCOPE, "PATH_OUTSIDE_ROOT", `${JSON.stringify(value)} does not resolve inside ${root}: ${why}.`, {
    file: root,
    value,
    hint: "pass a plain name below the plan root",
  });
}

function optionError(field: string, value: unknown, hint: string): WorkflowError {
  return workflowError(SCOPE, "INVALID_OPTIONS", `option ${field} is unusable: ${JSON.stringify(value) ?? "undefined"}.`, {
    field,
    value,
    hint,
  });
}
