/**
 * The verification cache key: what was run (command, cwd, tool, phase, Node version) and the exact state of
 * the working tree it ran against. In a git repository the state is HEAD, status, staged and unstaged diffs
 * and the contents of untracked files; elsewhere it is every file under cwd. Anything that cannot be hashed
 * in full (too large, git failing) gives no key at all, so a cache can miss but never pass stale work.
 */
import { execFile } from "node:child_process";
import { createHash, type Hash } from "node:crypto";
import { lstat, readFile, readdir, readlink } from "node:fs/promises";
import path from "node:path";
import { fingerprint } from "../engine/fingerprint.js";
import { LOCKFILES } from "./config.js";

/** Default cap on the bytes hashed for one workspace state (diffs, untracked files, working files). */
export const DEFAULT_FINGERPRINT_MAX_BYTES = 16 * 1024 * 1024;
/** Default cap on the number of files hashed outside git. */
export const DEFAULT_FINGERPRINT_MAX_FILES = 20_000;

/** Why no key could be made; each is a cache miss. */
export type FingerprintMissReason = "too-large" | "git-failed" | "unreadable";

/** The hashed state of a working tree, or why it could not be hashed. */
export type WorkspaceState =
  | { ok: true; source: "git" | "files"; digest: string; bytes: number }
  | { ok: false; key: null; reason: FingerprintMissReason; message: string };

/** A verification cache key, or `key: null` (a miss) with the reason. */
export type VerificationFingerprint =
  | { ok: true; key: string; source: "git" | "files" }
  | { ok: false; key: null; reason: FingerprintMissReason; message: string };

/** Options of `captureWorkspaceState`. */
export interface WorkspaceStateOptions {
  maxBytes?: number;
  maxFiles?: number;
  /**
   * Absolute paths left out of the state: the plan folder and the cache file, whose own writes would
   * otherwise change the key on every run. Paths outside the tree are ignored.
   */
  exclude?: readonly string[];
}

/** What identifies one verification command run. */
export interface VerificationIdentity {
  command: string;
  cwd: string;
  tool: string;
  phase?: string | undefined;
}

// Names that never take part in the state: installed dependencies and VCS metadata.
const SKIPPED_DIRS = new Set(["node_modules", ".git", ".hg", ".svn"]);
// Files that say which dependencies are installed: lockfiles, manifests and the package managers' install records.
const PM_FILES = ["package.json", ...LOCKFILES.map(([name]) => name), "node_modules/.modules.yaml", "node_modules/.package-lock.json", "node_modules/.yarn-state.yml", "node_modules/.yarn-integrity"];

class TooLarge extends Error {}

interface Budget {
  hash: Hash;
  left: number;
  used: number;
}

function add(budget: Budget, label: string, data: string | Uint8Array): void {
  const size = typeof data === "string" ? Buffer.byteLength(data) : data.byteLength;
  if (size > budget.left) throw new TooLarge(`${label} needs ${size} bytes, ${budget.left} left`);
  budget.left -= size;
  budget.used += size;
  // Length-prefixed parts: moving bytes from one part to the next changes the digest.
  budget.hash.update(`${label}\0${size}\0`).update(data);
}

function gitEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, GIT_OPTIONAL_LOCKS: "0", LC_ALL: "C" };
  // Inherited from a hook, these would point git at another repository than cwd's.
  for (const name of ["GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_COMMON_DIR"]) delete env[name];
  return env;
}

type GitResult = { ok: true; out: Buffer } | { ok: false; code: unknown; stderr: string };

function git(cwd: string, args: string[], maxBuffer: number): Promise<GitResult> {
  return new Promise((resolve) => {
    execFile("git", args, { cwd, env: gitEnv(), encoding: "buffer", maxBuffer, windowsHide: true }, (error, stdout, stderr) => {
      if (error === null) resolve({ ok: true, out: stdout });
      else resolve({ ok: false, code: (error as { code?: unknown }).code, stderr: stderr.toString("utf8") });
    });
  });
}

async function gitPart(budget: Budget, root: string, label: string, args: string[]): Promise<Buffer> {
  const r = await git(root, args, budget.left + 1);
  if (r.ok) {
    add(budget, label, r.out);
    return r.out;
  }
  if (r.code === "ERR_CHILD_PROCESS_STDIO_MAXBUFFER") throw new TooLarge(`git ${args[0]} output exceeds the cap`);
  throw new Error(`git ${args.join(" ")} failed (${String(r.code)}): ${r.stderr.trim()}`);
}

// `listed`: the name came from a directory listing, so failing to stat it (a name that does not round-trip
// through UTF-8, a race) must not hash as "missing" and hide later content changes: it fails the capture.
async function addFile(budget: Budget, label: string, file: string | Buffer, listed: boolean): Promise<void> {
  const st = await lstat(file).catch((error: unknown) => {
    if (listed) throw new Error(`cannot read ${String(file)}: ${error instanceof Error ? error.message : String(error)}`);
    return undefined;
  });
  if (st === undefined) return add(budget, `${label}:missing`, "");
  if (st.isSymbolicLink()) return add(budget, `${label}:link`, await readlink(file, { encoding: "buffer" }));
  if (!st.isFile()) return add(budget, `${label}:other`, "");
  if (st.size > budget.left) throw new TooLarge(`${file} is ${st.size} bytes`);
  add(budget, `${label}:file:${st.mode & 0o111 ? "x" : "-"}`, await readFile(file));
}

async function addPackageManagerFiles(budget: Budget, dirs: readonly string[]): Promise<void> {
  for (const dir of [...new Set(dirs)]) for (const name of PM_FILES) await addFile(budget, `pm:${dir}:${name}`, path.join(dir, name), false);
}

function splitNul(bytes: Buffer): Buffer[] {
  const parts: Buffer[] = [];
  for (let start = 0; start < bytes.length; ) {
    const end = bytes.indexOf(0, start);
    const stop = end === -1 ? bytes.length : end;
    if (stop > start) parts.push(bytes.subarray(start, stop));
    start = stop + 1;
  }
  return parts.sort(Buffer.compare);
}

// Pathspecs: the whole tree, minus each excluded path inside it (literal, so no name is read as a glob).
function gitPathspecs(root: string, exclude: readonly string[]): string[] {
  const specs = [":(top)"];
  for (const abs of exclude) {
    const rel = path.relative(root, path.resolve(abs));
    if (rel === "" || rel.startsWith("..") || path.isAbsolute(rel)) continue;
    specs.push(`:(top,exclude,literal)${rel.split(path.sep).join("/")}`);
  }
  return ["--", ...specs];
}

async function addGitState(budget: Budget, root: string, exclude: readonly string[]): Promise<void> {
  const specs = gitPathspecs(root, exclude);
  const head = await git(root, ["rev-parse", "--verify", "-q", "HEAD"], 4096);
  // Exit 1 with nothing on stderr is an unborn branch; anything else is a broken repository.
  if (!head.ok && (head.code !== 1 || head.stderr.trim() !== "")) throw new Error(`git rev-parse HEAD failed (${String(head.code)}): ${head.stderr.trim()}`);
  add(budget, "head", head.ok ? head.out : "(no commits)");
  const diff = ["--binary", "--no-ext-diff", "--no-textconv", "--no-color", "--full-index"];
  await gitPart(budget, root, "status", ["status", "--porcelain=v1", "-z", "--untracked-files=all", "--ignore-submodules=none", ...specs]);
  await gitPart(budget, root, "staged", ["diff", "--cached", ...diff, ...specs]);
  await gitPart(budget, root, "unstaged", ["diff", ...diff, ...specs]);
  const untracked = await git(root, ["ls-files", "--others", "--exclude-standard", "-z", ...specs], budget.left + 1);
  if (!untracked.ok) throw untracked.code === "ERR_CHILD_PROCESS_STDIO_MAXBUFFER" ? new TooLarge("untracked list") : new Error(`git ls-files failed: ${untracked.stderr.trim()}`);
  // Names stay bytes: git prints them raw with -z, and a non-UTF-8 name must still open the right file.
  const rootBytes = Buffer.from(`${root}${path.sep}`);
  for (const name of splitNul(untracked.out)) await addFile(budget, `untracked:${name.toString("hex")}`, Buffer.concat([rootBytes, name]), true);
}

interface WalkLimits {
  count: number;
  max: number;
  exclude: ReadonlySet<string>;
}

async function walk(budget: Budget, root: string, rel: string, files: WalkLimits): Promise<void> {
  const entries = (await readdir(path.join(root, rel), { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    const child = rel === "" ? entry.name : `${rel}/${entry.name}`;
    if (SKIPPED_DIRS.has(entry.name) || files.exclude.has(path.join(root, child))) continue;
    // Directories add nothing by themselves (as in git): a folder holding only excluded files leaves no trace.
    if (entry.isDirectory()) {
      await walk(budget, root, child, files);
      continue;
    }
    if (++files.count > files.max) throw new TooLarge(`more than ${files.max} files under ${root}`);
    await addFile(budget, `work:${child}`, path.join(root, child), true);
  }
}

async function gitRoot(cwd: string): Promise<{ ok: true; root: string | null } | { ok: false; message: string }> {
  const r = await git(cwd, ["rev-parse", "--show-toplevel"], 64 * 1024);
  if (r.ok) return { ok: true, root: r.out.toString("utf8").trim() };
  // No git binary, or cwd outside any repository: the working files are the state.
  if (r.code === "ENOENT" || /not a git repository/i.test(r.stderr)) return { ok: true, root: null };
  return { ok: false, message: `git rev-parse failed in ${cwd}: ${r.stderr.trim() || String(r.code)}` };
}

/** Hashes the working-tree state around `cwd` (git state inside a repository, every file under cwd outside one). */
export async function captureWorkspaceState(cwd: string, options: WorkspaceStateOptions = {}): Promise<WorkspaceState> {
  const maxBytes = options.maxBytes ?? DEFAULT_FINGERPRINT_MAX_BYTES;
  const budget: Budget = { hash: createHash("sha256"), left: maxBytes, used: 0 };
  const dir = path.resolve(cwd);
  try {
    const located = await gitRoot(dir);
    if (!located.ok) return { ok: false, key: null, reason: "git-failed", message: located.message };
    const root = located.root;
    await addPackageManagerFiles(budget, root === null ? [dir] : [dir, root]);
    const exclude = options.exclude ?? [];
    if (root === null) await walk(budget, dir, "", { count: 0, max: options.maxFiles ?? DEFAULT_FINGERPRINT_MAX_FILES, exclude: new Set(exclude.map((p) => path.resolve(p))) });
    else await addGitState(budget, root, exclude);
    return { ok: true, source: root === null ? "files" : "git", digest: budget.hash.digest("hex"), bytes: budget.used };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (error instanceof TooLarge) return { ok: false, key: null, reason: "too-large", message: `workspace state over ${maxBytes} bytes: ${message}` };
    return { ok: false, key: null, reason: error instanceof Error && message.startsWith("git ") ? "git-failed" : "unreadable", message };
  }
}

/** The cache key of one command over an already captured state; pure, so several commands can share a capture. */
export function verificationKey(identity: VerificationIdentity, state: WorkspaceState & { ok: true }): string {
  return fingerprint({
    v: 1,
    command: identity.command,
    cwd: path.resolve(identity.cwd),
    tool: identity.tool,
    phase: identity.phase ?? null,
    node: process.version,
    platform: process.platform,
    source: state.source,
    state: state.digest,
  });
}

/** Captures the state around `identity.cwd` and returns the cache key of the command, or `key: null` (a miss). */
export async function computeVerificationFingerprint(identity: VerificationIdentity, options: WorkspaceStateOptions = {}): Promise<VerificationFingerprint> {
  const state = await captureWorkspaceState(identity.cwd, options);
  if (!state.ok) return state;
  return { ok: true, key: verificationKey(identity, state), source: state.source };
}
