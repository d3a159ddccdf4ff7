/** The examples quoted by docs/core.md and run by the demo: they must keep doing what the docs say. */
import { describe, expect, it } from "vitest";
import { editDuringStaticAnalysis, walkRelease } from "../../../examples/core-usage.js";
import { releaseDefinitions, releaseRegistry } from "../../../examples/release-workflow.js";

describe("examples", () => {
  it("the release definitions compile, with one shown command", () => {
    const registry = releaseRegistry();
    expect([...registry.workflows.keys()].sort()).toEqual(Object.keys(releaseDefinitions).sort());
    expect([...registry.commands.entries()]).toEqual([["release", "release"]]);
  });

  it("walkRelease goes into and out of the nested sub-workflows, loops once, is refused a second loop, and cancels in two steps", () => {
    const lines = walkRelease();
    const arrows = lines.filter((l) => l.includes("→")).map((l) => l.replace(/\s+/g, " "));
    expect(arrows).toEqual([
      "start → Release Pipeline > 📦 Build [1/3]",
      "advance advanced +review → Release Pipeline > Code Review [2/3] > 🔍 Static Analysis [1/2] [step 2]",
      "advance advanced +security → Release Pipeline > Code Review [2/3] > Security Audit [2/2] > 🛡️ Threat Model [1/2] [step 4]",
      "advance advanced → Release Pipeline > Code Review [2/3] > Security Audit [2/2] > 🔒 Dependency Audit [2/2] [step 5]",
      "loop looped → Release Pipeline > Code Review [2/3] > Security Audit [2/2] > 🛡️ Threat Model [1/2] [step 6]",
      "advance advanced → Release Pipeline > Code Review [2/3] > Security Audit [2/2] > 🔒 Dependency Audit [2/2] [step 7]",
      "loop refused MAX_LOOPS_REACHED → Release Pipeline > Code Review [2/3] > Security Audit [2/2] > 🔒 Dependency Audit [2/2] [step 7]",
      "advance exited-subworkflow -security -review → Release Pipeline > 🚀 Publish [3/3] [step 8]",
      "cancel cancel-armed → Release Pipeline > 🚀 Publish [3/3] [step 8]",
      "cancel cancelled → (cancelled) [step 8]",
    ]);
    expect(lines.at(-1)).toBe("❌ **Release Pipeline Cancelled**\n\n**Task:** Ship v1.2.0\n**Task ID:** demo-0001");
  });

  it("the tool-policy example blocks edit during Static Analysis with the default reason", () => {
    expect(editDuringStaticAnalysis()).toMatch(/^\[workflow\] The tool "edit" is blocked during the Static Analysis phase\./);
  });
});
