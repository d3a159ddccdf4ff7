/**
 * The example used by the docs, the tests and the demo: a release workflow with a review sub-workflow, which
 * ends on a third-level security sub-workflow (a reference at the last position) that may loop once.
 *
 *   release  Release Pipeline   [📦 Build, → review, 🚀 Publish]       not loopable
 *   review   Code Review        [🔍 Static Analysis, → security]       loopable, at most 2 loops per visit
 *   security Security Audit     [🛡️ Threat Model, 🔒 Dependency Audit]  loopable, at most 1 loop per visit
 */
import { compileDefinitions, type WorkflowDefinitionInput, type WorkflowRegistry } from "@phasekit/core";

/** The raw definitions, as a user would write them in a workflow settings file. */
export const releaseDefinitions = {
  release: {
    name: "Release Pipeline",
    description: "Build, review and publish a release",
    commandName: "release",
    loopable: false,
    phases: [
      { id: "build", name: "Build", emoji: "📦", instructions: "Build {workflowName} for task {taskId}." },
      { subworkflow: "review" },
      { id: "publish", name: "Publish", emoji: "🚀", instructions: "Publish the release. Previous phase: {previousPhaseName}." },
    ],
    profiles: [{ name: "builder", description: "Runs builds and packaging" }],
  },
  review: {
    name: "Code Review",
    show: false,
    maxLoops: 2,
    phases: [
      {
        id: "static-analysis",
        name: "Static Analysis",
        emoji: "🔍",
        instructions: "Run the linters. Next: {nextPhaseName}.",
        tools: { blacklist: ["edit", "write"] },
      },
      { subworkflow: "security" },
    ],
  },
  security: {
    name: "Security Audit",
    show: false,
    maxLoops: 1,
    phases: [
      { id: "threat-model", name: "Threat Model", emoji: "🛡️", tools: { whitelist: ["read", "grep"] } },
      { id: "dependency-audit", name: "Dependency Audit", emoji: "🔒", availableProfiles: ["auditor"] },
    ],
    profiles: [{ name: "auditor", description: "Reads lockfiles and advisories" }],
  },
} satisfies Record<string, WorkflowDefinitionInput>;

/** Compiles definitions and throws with every problem listed (fine for examples; adapters report problems). */
export function compileOrThrow(raw: unknown): WorkflowRegistry {
  const compiled = compileDefinitions(raw);
  if (!compiled.ok) throw new Error(compiled.problems.map((p) => p.message).join("\n"));
  return compiled.registry;
}

/** The compiled registry of the release example. */
export function releaseRegistry(): WorkflowRegistry {
  return compileOrThrow(releaseDefinitions);
}
