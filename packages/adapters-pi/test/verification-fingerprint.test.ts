import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { execFileSync } from "node:child_process";
import { mkdtemp, mkdir, writeFile, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { captureWorkspaceState, computeVerificationFingerprint } from "../src/verification/fingerprint.js";
import type { VerificationIdentity } from "../src/verification/fingerprint.js";

let base = "";
beforeAll(async () => {
  base = await mkdtemp(path.join(tmpdir(), "phasekit-vfp-"));
});
afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

const cleanEnv = { ...process.env, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" };
function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", ["-c", "user.email=a@b", "-c", "user.name=n", "-c", "commit.gpgsign=false", ...args], { cwd, env: cleanEnv, encoding: "utf8" });
}

let seq = 0;
async function repo(): Promise<string> {
  const dir = path.join(base, `repo-${++seq}`);
  await mkdir(dir);
  git(dir, "init", "-q");
  await writeFile(path.join(dir, "a.txt"), "one\n");
  await writeFile(path.join(dir, "package.json"), '{"name":"x"}\n');
  git(dir, "add", ".");
  git(dir, "commit", "-qm", "first");
  return dir;
}

async function key(cwd: string, extra: Partial<VerificationIdentity> = {}, maxBytes?: number): Promise<string | null> {
  const r = await computeVerificationFingerprint({ command: "npm test", cwd, tool: "implement", phase: "build", ...extra }, maxBytes === undefined ? {} : { maxBytes });
  return r.key;
}

describe("verification fingerprint in a git repository", () => {
  it("is stable while nothing changes and uses the git state", async () => {
    const dir = await repo();
    const k = await key(dir);
    expect(k).toMatch(/^v1:sha256:[0-9a-f]{64}$/);
    expect(await key(dir)).toBe(k);
    const state = await captureWorkspaceState(dir);
    expect(state.ok && state.source).toBe("git");
  });

  it("covers command, cwd, tool and phase", async () => {
    const dir = await repo();
    await mkdir(path.join(dir, "sub"));
    const k = await key(dir);
    const others = [await key(dir, { command: "npm run lint" }), await key(dir, { tool: "plan" }), await key(dir, { phase: "review" }), await key(dir, { phase: undefined }), await key(path.join(dir, "sub"))];
    expect(new Set([k, ...others]).size).toBe(6);
  });

  it("changes when a tracked file is edited, then staged, then committed (HEAD moves)", async () => {
    const dir = await repo();
    const k0 = await key(dir);
    await writeFile(path.join(dir, "a.txt"), "two\n");
    const k1 = await key(dir);
    git(dir, "add", "a.txt");
    const k2 = await key(dir);
    git(dir, "commit", "-qm", "second");
    const k3 = await key(dir);
    expect(new Set([k0, k1, k2, k3]).size).toBe(4);
    // the same content edited twice differently gives two keys (the diff is hashed, not just the status)
    await writeFile(path.join(dir, "a.txt"), "three\n");
    const k4 = await key(dir);
    await writeFile(path.join(dir, "a.txt"), "four\n");
    expect(await key(dir)).not.toBe(k4);
  });

  it("changes when HEAD moves to a commit with the same tree", async () => {
    const dir = await repo();
    const k0 = await key(dir);
    git(dir, "commit", "-q", "--allow-empty", "-m", "empty");
    expect(await key(dir)).not.toBe(k0);
  });

  it("changes when an untracked file's content changes, and ignores gitignored files", async () => {
    const dir = await repo();
    await writeFile(path.join(dir, "new.txt"), "draft 1");
    const k1 = await key(dir);
    await writeFile(path.join(dir, "new.txt"), "draft 2");
    const k2 = await key(dir);
    expect(k2).not.toBe(k1);
    await writeFile(path.join(dir, ".gitignore"), "build/\n");
    const k3 = await key(dir);
    await mkdir(path.join(dir, "build"));
    await writeFile(path.join(dir, "build", "out.js"), "x");
    expect(await key(dir)).toBe(k3);
  });

  it("changes when the install state changes (node_modules/.package-lock.json)", async () => {
    const dir = await repo();
    await writeFile(path.join(dir, ".gitignore"), "node_modules/\n");
    await mkdir(path.join(dir, "node_modules"));
    const k0 = await key(dir);
    await writeFile(path.join(dir, "node_modules", ".package-lock.json"), '{"v":1}');
    expect(await key(dir)).not.toBe(k0);
  });

  it("a diff over the byte cap is a miss (null key), not a key without it", async () => {
    const dir = await repo();
    const small = await key(dir, {}, 64 * 1024);
    expect(small).not.toBeNull();
    await writeFile(path.join(dir, "a.txt"), "x".repeat(200_000));
    const r = await computeVerificationFingerprint({ command: "npm test", cwd: dir, tool: "t" }, { maxBytes: 64 * 1024 });
    expect(r).toMatchObject({ ok: false, key: null, reason: "too-large" });
    git(dir, "add", "a.txt"); // staged: the same bytes in the staged diff
    expect(await key(dir, {}, 64 * 1024)).toBeNull();
  });

  it.skipIf(process.platform !== "linux")("follows an untracked file whose name is not UTF-8", async () => {
    const dir = await repo();
    const odd = Buffer.concat([Buffer.from(`${dir}/`), Buffer.from([0x66, 0xff, 0x2e, 0x74])]);
    await writeFile(odd, "v1");
    const k1 = await key(dir);
    await writeFile(odd, "v2");
    const k2 = await key(dir);
    expect(k1).not.toBeNull();
    expect(k2).not.toBe(k1);
  });

  it("git failing inside a repository (corrupt index) is a miss, not a key without git state", async () => {
    const dir = await repo();
    await writeFile(path.join(dir, ".git", "index"), "garbage");
    const r = await computeVerificationFingerprint({ command: "c", cwd: dir, tool: "t" });
    expect(r).toMatchObject({ ok: false, key: null, reason: "git-failed" });
  });

  it("an untracked file over the cap is a miss", async () => {
    const dir = await repo();
    await writeFile(path.join(dir, "big.bin"), Buffer.alloc(100_000, 1));
    expect(await key(dir, {}, 50_000)).toBeNull();
    expect(await key(dir, {}, 500_000)).not.toBeNull();
  });
});

describe("excluded paths (the plan folder, the cache file)", () => {
  it("in git: writes under an excluded folder, tracked or not, leave the key alone; other writes do not", async () => {
    const dir = await repo();
    const plan = path.join(dir, "ai_plan", "run-1");
    await mkdir(plan, { recursive: true });
    await writeFile(path.join(plan, "workflow.json"), "{}");
    git(dir, "add", ".");
    git(dir, "commit", "-qm", "plan committed");
    const opts = { exclude: [plan, "/elsewhere/ignored"] };
    const id = { command: "c", cwd: dir, tool: "t" };
    const k0 = (await computeVerificationFingerprint(id, opts)).key;
    await writeFile(path.join(plan, "workflow.json"), '{"generation":2}');
    await writeFile(path.join(plan, "verification-cache.json"), "[]");
    expect((await computeVerificationFingerprint(id, opts)).key).toBe(k0);
    expect((await computeVerificationFingerprint(id)).key).not.toBe(k0);
    await writeFile(path.join(dir, "a.txt"), "edited\n");
    expect((await computeVerificationFingerprint(id, opts)).key).not.toBe(k0);
  });

  it("outside git: an excluded file and an emptied folder leave no trace", async () => {
    const dir = path.join(base, `plain-${++seq}`);
    await mkdir(dir);
    await writeFile(path.join(dir, "x.txt"), "x");
    const cacheFile = path.join(dir, ".cache", "verification-cache.json");
    const k0 = (await captureWorkspaceState(dir, { exclude: [cacheFile] }));
    await mkdir(path.dirname(cacheFile));
    await writeFile(cacheFile, "{}");
    const k1 = await captureWorkspaceState(dir, { exclude: [cacheFile] });
    expect(k1.ok && k1.digest).toBe(k0.ok && k0.digest);
    const k2 = await captureWorkspaceState(dir);
    expect(k2.ok && k2.digest).not.toBe(k0.ok && k0.digest);
  });
});

describe("verification fingerprint outside git", () => {
  async function plain(): Promise<string> {
    const dir = path.join(base, `plain-${++seq}`);
    await mkdir(path.join(dir, "src"), { recursive: true });
    await writeFile(path.join(dir, "src", "a.ts"), "export const a = 1;\n");
    return dir;
  }

  it("hashes the working files, skipping node_modules and .git", async () => {
    const dir = await plain();
    const state = await captureWorkspaceState(dir);
    expect(state.ok && state.source).toBe("files");
    const k0 = await key(dir);
    expect(await key(dir)).toBe(k0);
    await writeFile(path.join(dir, "src", "a.ts"), "export const a = 2;\n");
    const k1 = await key(dir);
    expect(k1).not.toBe(k0);
    await writeFile(path.join(dir, "src", "b.ts"), "");
    const k2 = await key(dir);
    expect(k2).not.toBe(k1);
    await rm(path.join(dir, "src", "b.ts"));
    expect(await key(dir)).toBe(k1);
    await mkdir(path.join(dir, "node_modules", "dep"), { recursive: true });
    await writeFile(path.join(dir, "node_modules", "dep", "index.js"), "x");
    expect(await key(dir)).toBe(k1);
  });

  it("notices a renamed file and a changed symlink target", async () => {
    const dir = await plain();
    await symlink("src/a.ts", path.join(dir, "link"));
    const k0 = await key(dir);
    await rm(path.join(dir, "link"));
    await symlink("src", path.join(dir, "link"));
    const k1 = await key(dir);
    expect(k1).not.toBe(k0);
    const { rename } = await import("node:fs/promises");
    await rename(path.join(dir, "src", "a.ts"), path.join(dir, "src", "c.ts"));
    expect(await key(dir)).not.toBe(k1);
  });

  it.skipIf(process.platform !== "linux")("a file name that is not UTF-8 is a miss, not a file hashed as missing", async () => {
    const dir = await plain();
    await writeFile(Buffer.concat([Buffer.from(`${dir}/`), Buffer.from([0x66, 0xff])]), "x");
    expect(await captureWorkspaceState(dir)).toMatchObject({ ok: false, reason: "unreadable" });
  });

  it("too many files or bytes is a miss", async () => {
    const dir = await plain();
    for (let i = 0; i < 5; i++) await writeFile(path.join(dir, `f${i}`), "y".repeat(1000));
    expect((await captureWorkspaceState(dir, { maxFiles: 3 })).ok).toBe(false);
    const r = await captureWorkspaceState(dir, { maxBytes: 2000 });
    expect(r).toMatchObject({ ok: false, reason: "too-large" });
    expect((await captureWorkspaceState(dir)).ok).toBe(true);
  });
});
