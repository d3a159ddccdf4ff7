import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { mkdtemp, mkdir, rm, symlink, writeFile, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { isWorkflowError } from "@phasekit/core";
import {
  ensurePrivateDir,
  isInside,
  resolveInside,
  resolvePlanRoot,
  validateSlug,
  validateStepId,
} from "../src/io/plan-paths.js";

let root = "";
let outside = "";

beforeAll(async () => {
  const base = await mkdtemp(path.join(tmpdir(), "phasekit-paths-"));
  root = path.join(base, "ai_plan");
  outside = path.join(base, "elsewhere");
  await mkdir(path.join(root, "run-1", "artifacts"), { recursive: true });
  await mkdir(outside, { recursive: true });
  await mkdir(path.join(base, "ai_plan-evil"), { recursive: true });
  await symlink(outside, path.join(root, "linked-dir"));
  await writeFile(path.join(outside, "secret.json"), "{}");
  await symlink(path.join(outside, "secret.json"), path.join(root, "run-1", "workflow.json"));
});
afterAll(async () => {
  await rm(path.dirname(root), { recursive: true, force: true });
});

describe("resolvePlanRoot", () => {
  it("defaults to <repoRoot>/ai_plan, expands ~ and resolves relative paths against the repo", () => {
    expect(resolvePlanRoot({ repoRoot: "/repo" })).toBe("/repo/ai_plan");
    expect(resolvePlanRoot({ repoRoot: "/repo", planRoot: "plans/x" })).toBe("/repo/plans/x");
    expect(resolvePlanRoot({ repoRoot: "/repo", planRoot: "/abs/p" })).toBe("/abs/p");
    expect(resolvePlanRoot({ repoRoot: "/repo", planRoot: "~/p", homeDir: "/home/u" })).toBe("/home/u/p");
    expect(resolvePlanRoot({ repoRoot: "/repo", planRoot: "~", homeDir: "/home/u" })).toBe("/home/u");
  });
  it("refuses ~ without a home folder and empty roots with INVALID_OPTIONS", () => {
    expect(() => resolvePlanRoot({ repoRoot: "/repo", planRoot: "~/p" })).toThrow(/homeDir/);
    expect(() => resolvePlanRoot({ repoRoot: "" })).toThrow(/repoRoot/);
  });
});

describe("validateSlug / validateStepId", () => {
  const badSlugs: Array<[unknown, RegExp]> = [
    ["", /empty/],
    ["..", /relative folder/],
    [".", /relative folder/],
    ["a/b", /may only hold/],
    ["a\\b", /may only hold/],
    ["a:b", /may only hold/],
    ["CON", /reserved device/],
    ["nul.json", /reserved device/],
    ["com1", /reserved device/],
    ["x".repeat(129), /129 characters/],
    ["a\0b", /control character/],
    ["trail.", /ends with/],
    [".hidden", /may only hold/],
    ["%2e%2e", /may only hold/],
    [42, /number, not a string/],
    [null, /null, not a string/],
  ];
  for (const [value, why] of badSlugs) {
    it(`refuses slug ${JSON.stringify(String(value)).slice(0, 30)} with INVALID_SLUG naming why`, () => {
      const r = validateSlug(value);
      expect(r.ok).toBe(false);
      if (r.ok) return;
      expect(r.error.code).toBe("INVALID_SLUG");
      expect(r.error.message).toMatch(why);
      expect(r.error.message).toMatch(/^\[phasekit\] \[paths\] slug /);
    });
  }
  it("accepts ordinary slugs and step ids", () => {
    expect(validateSlug("feature-x_2.1")).toEqual({ ok: true, slug: "feature-x_2.1" });
    expect(validateStepId("spawnText:planner:3")).toEqual({ ok: true, stepId: "spawnText:planner:3" });
    expect(validateStepId("../x").ok).toBe(false);
    expect(validateStepId("a b").ok).toBe(false);
  });
});

describe("resolveInside", () => {
  const hostile: Array<[string[], "PATH_OUTSIDE_ROOT" | "INVALID_SLUG"]> = [
    [[".."], "PATH_OUTSIDE_ROOT"],
    [["run-1", "..", ".."], "PATH_OUTSIDE_ROOT"],
    [["run-1/../../x"], "PATH_OUTSIDE_ROOT"],
    [["%2e%2e"], "PATH_OUTSIDE_ROOT"],
    [["%2E%2E", "x"], "PATH_OUTSIDE_ROOT"],
    [["%252e%252e"], "PATH_OUTSIDE_ROOT"],
    [["a%2fb"], "PATH_OUTSIDE_ROOT"],
    [["/etc/passwd"], "PATH_OUTSIDE_ROOT"],
    [["C:\\x"], "PATH_OUTSIDE_ROOT"],
    [["a\0b"], "INVALID_SLUG"],
    [["x".repeat(129)], "INVALID_SLUG"],
    [["CON"], "INVALID_SLUG"],
    [["run-1", "aux.txt"], "INVALID_SLUG"],
    [["a:b"], "PATH_OUTSIDE_ROOT"], // a drive-relative path on Windows
    [["file:stream"], "INVALID_SLUG"],
    [["a\\..\\b"], "INVALID_SLUG"],
    [["run-1", ""], "INVALID_SLUG"],
    [["%zz"], "INVALID_SLUG"],
    [["../ai_plan-evil"], "PATH_OUTSIDE_ROOT"],
    [["linked-dir"], "PATH_OUTSIDE_ROOT"],
    [["linked-dir", "secret.json"], "PATH_OUTSIDE_ROOT"],
    [["run-1", "workflow.json"], "PATH_OUTSIDE_ROOT"],
  ];
  for (const [segments, code] of hostile) {
    it(`refuses ${JSON.stringify(segments).slice(0, 60)} with ${code}`, async () => {
      const error = await resolveInside(root, ...segments).then(() => undefined, (e: unknown) => e);
      expect(isWorkflowError(error, code)).toBe(true);
    });
  }
  it("resolves plain names, existing or not, below the root", async () => {
    expect(await resolveInside(root, "run-1", "artifacts")).toBe(path.join(root, "run-1", "artifacts"));
    expect(await resolveInside(root, "run-2/checkpoints.ndjson")).toBe(path.join(root, "run-2", "checkpoints.ndjson"));
  });
  it("does not treat a sibling that merely starts with the root's name as inside", () => {
    expect(isInside("/x/ai_plan", "/x/ai_plan-evil/a")).toBe(false);
    expect(isInside("/x/ai_plan", "/x/ai_plan/a")).toBe(true);
    expect(isInside("/x/ai_plan", "/x/ai_plan")).toBe(true);
  });
});

describe("ensurePrivateDir", () => {
  it("creates folders with mode 0700 and refuses a symlink in place of the folder", async () => {
    const dir = path.join(root, "private", "deep");
    await ensurePrivateDir(dir);
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    expect((await stat(path.join(root, "private"))).mode & 0o777).toBe(0o700);
    const error = await ensurePrivateDir(path.join(root, "linked-dir")).then(() => undefined, (e: unknown) => e);
    expect(isWorkflowError(error, "PATH_OUTSIDE_ROOT")).toBe(true);
  });
});
