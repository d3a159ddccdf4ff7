import { describe, it, expect } from "vitest";
import { mkdtemp, mkdir, writeFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { isWorkflowError } from "@phasekit/core";
import {
  defaultStageCommands,
  detectPackageManager,
  expandStages,
  packageManagerFromFiles,
  resolveVerificationConfig,
  verifiesAt,
} from "../src/verification/config.js";

function invalid(fn: () => unknown): { field: unknown; value: unknown; message: string } {
  try {
    fn();
  } catch (e) {
    expect(isWorkflowError(e, "INVALID_CONFIG")).toBe(true);
    const err = e as Error & { details: { field: unknown; value: unknown } };
    return { field: err.details.field, value: err.details.value, message: err.message };
  }
  throw new Error("expected INVALID_CONFIG");
}

describe("resolveVerificationConfig", () => {
  it("fills every field with documented defaults", () => {
    const p = resolveVerificationConfig("implement");
    expect(p).toEqual({
      tool: "implement",
      timing: "after",
      mode: "commands",
      stages: ["typecheck", "test", "lint"],
      commands: [
        { stage: "typecheck", command: "npm run typecheck" },
        { stage: "test", command: "npm test" },
        { stage: "lint", command: "npm run lint" },
      ],
      cache: "run",
      maxAttempts: 1,
      timeoutMs: 600_000,
      packageManager: "npm",
    });
  });

  it("derives stage commands from the package manager", () => {
    expect(defaultStageCommands("pnpm")).toEqual({ typecheck: "pnpm typecheck", test: "pnpm test", lint: "pnpm lint" });
    expect(defaultStageCommands("yarn")).toEqual({ typecheck: "yarn typecheck", test: "yarn test", lint: "yarn lint" });
    expect(defaultStageCommands("bun")).toEqual({ typecheck: "bun run typecheck", test: "bun run test", lint: "bun run lint" });
    const p = resolveVerificationConfig("t", { default: { stages: ["test"] } }, undefined, { packageManager: "pnpm" });
    expect(p.commands).toEqual([{ stage: "test", command: "pnpm test" }]);
  });

  it.each([
    [["all", "test", "all"], ["typecheck", "test", "lint"]],
    [["lint", "all"], ["lint", "typecheck", "test"]],
    [["test", "test"], ["test"]],
    [["custom", "custom", "lint"], ["custom", "lint"]],
    [[], []],
  ] as const)("expands and de-duplicates stages %j", (input, expected) => {
    expect(expandStages(input)).toEqual(expected);
  });

  it("layers default < tools[name] < override, merging stageCommands per stage", () => {
    const settings = {
      default: { timing: "both", maxAttempts: 2, stageCommands: { test: "vitest run" }, cache: "persistent" },
      tools: { plan: { timing: "off" }, implement: { mode: "commands-and-agent", stageCommands: { lint: "eslint ." } } },
    };
    const impl = resolveVerificationConfig("implement", settings, { maxAttempts: 3 });
    expect(impl).toMatchObject({ timing: "both", mode: "commands-and-agent", maxAttempts: 3, cache: "persistent" });
    expect(impl.commands.map((c) => c.command)).toEqual(["npm run typecheck", "vitest run", "eslint ."]);
    expect(resolveVerificationConfig("plan", settings).timing).toBe("off");
    expect(resolveVerificationConfig("other", settings).commands.map((c) => c.command)).toEqual(["npm run typecheck", "vitest run", "npm run lint"]);
  });

  it("custom runs only the commands list; extra commands follow the stages; no command runs twice", () => {
    expect(resolveVerificationConfig("t", {}, { stages: ["custom"], commands: ["make check"] }).commands).toEqual([
      { stage: "custom", command: "make check" },
    ]);
    const p = resolveVerificationConfig("t", {}, { stages: ["test", "all"], commands: ["npm test", "make e2e", "make e2e"] });
    expect(p.commands).toEqual([
      { stage: "test", command: "npm test" },
      { stage: "typecheck", command: "npm run typecheck" },
      { stage: "lint", command: "npm run lint" },
      { stage: "custom", command: "make e2e" },
    ]);
    // two stages mapped to the same script run it once
    const same = resolveVerificationConfig("t", {}, { stageCommands: { typecheck: "make all", lint: "make all" } });
    expect(same.commands.map((c) => c.command)).toEqual(["make all", "npm test"]);
  });

  it("verifiesAt follows timing", () => {
    expect(verifiesAt({ timing: "both" }, "before")).toBe(true);
    expect(verifiesAt({ timing: "after" }, "before")).toBe(false);
    expect(verifiesAt({ timing: "off" }, "after")).toBe(false);
  });

  it.each([
    [{ default: { timing: "sometimes" } }, undefined, "default.timing", "sometimes"],
    [{ default: { mode: "robot" } }, undefined, "default.mode", "robot"],
    [{ tools: { x: { stages: ["test", "e2e"] } } }, undefined, "tools.x.stages[1]", "e2e"],
    [{ default: { stages: "test" } }, undefined, "default.stages", "test"],
    [{ default: { cache: "forever" } }, undefined, "default.cache", "forever"],
    [{ default: { maxAttempts: 0 } }, undefined, "default.maxAttempts", 0],
    [{ default: { maxAttempts: 1.5 } }, undefined, "default.maxAttempts", 1.5],
    [{ default: { maxAttempts: "2" } }, undefined, "default.maxAttempts", "2"],
    [{ default: { timeoutMs: -5 } }, undefined, "default.timeoutMs", -5],
    [{ default: { commands: ["ok", "  "] } }, undefined, "default.commands[1]", "  "],
    [{ default: { commands: "make" } }, undefined, "default.commands", "make"],
    [{ default: { stageCommands: { test: "" } } }, undefined, "default.stageCommands.test", ""],
    [{ default: { stageCommands: { e2e: "x" } } }, undefined, "default.stageCommands.e2e", "x"],
    [{ default: { stage: ["test"] } }, undefined, "default.stage", ["test"]],
    [{ tool: {} }, undefined, "tool", {}],
    [{ tools: { x: null } }, undefined, "tools.x", null],
    ["yes", undefined, "config", "yes"],
    [{}, { maxAttempts: -1 }, "override.maxAttempts", -1],
    [{}, { timing: 3 }, "override.timing", 3],
  ] as const)("rejects %j / %j naming %s", (config, override, field, value) => {
    const e = invalid(() => resolveVerificationConfig("t", config, override));
    expect(e.field).toBe(field);
    expect(e.value).toEqual(value);
    expect(e.message).toMatch(/^\[phasekit\] \[verification\] /);
    expect(e.message).toContain(`${field}: `);
  });

  it("rejects a custom stage without commands", () => {
    const e = invalid(() => resolveVerificationConfig("t", {}, { stages: ["custom"] }));
    expect(e.field).toBe("commands");
  });
});

describe("package manager detection", () => {
  it("reads lockfile names", () => {
    expect(packageManagerFromFiles(["package.json", "pnpm-lock.yaml"])).toBe("pnpm");
    expect(packageManagerFromFiles(["yarn.lock"])).toBe("yarn");
    expect(packageManagerFromFiles(["package-lock.json"])).toBe("npm");
    expect(packageManagerFromFiles(["bun.lock"])).toBe("bun");
    expect(packageManagerFromFiles([])).toBe("npm");
  });

  it("finds the nearest lockfile upwards, stopping at the git root", async () => {
    const root = await mkdtemp(path.join(tmpdir(), "phasekit-pm-"));
    try {
      await mkdir(path.join(root, "repo", ".git"), { recursive: true });
      await mkdir(path.join(root, "repo", "packages", "a"), { recursive: true });
      await writeFile(path.join(root, "yarn.lock"), "");
      expect(await detectPackageManager(path.join(root, "repo", "packages", "a"))).toBe("npm");
      await writeFile(path.join(root, "repo", "pnpm-lock.yaml"), "");
      expect(await detectPackageManager(path.join(root, "repo", "packages", "a"))).toBe("pnpm");
      expect(await detectPackageManager(root)).toBe("yarn");
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});
