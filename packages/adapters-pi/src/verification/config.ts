/**
 * Verification settings → one complete policy per tool. Settings are layered: built-in defaults, then
 * `default`, then `tools[toolName]`, then the per-call override; each layer replaces the fields it sets
 * (`stageCommands` merges per stage). Everything is zod-validated; a bad field is INVALID_CONFIG naming it.
 */
import { readdir } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { workflowError } from "@phasekit/core";
import { schemaIssue } from "../engine/record-issue.js";

/** When verification runs relative to the step it guards. */
export type VerificationTiming = "off" | "before" | "after" | "both";
/** Who verifies: shell commands, a read-only verifier agent, or both (commands first). */
export type VerificationMode = "commands" | "agent" | "commands-and-agent";
/** A stage name as written in config; `all` expands to typecheck, test and lint. */
export type VerificationStageName = "typecheck" | "test" | "lint" | "all" | "custom";
/** A concrete stage of a resolved policy. */
export type VerificationStage = "typecheck" | "test" | "lint" | "custom";
/** Where passing fingerprints are remembered. */
export type VerificationCacheMode = "off" | "run" | "persistent";
/** Package managers whose lockfiles are recognised. */
export type PackageManager = "pnpm" | "npm" | "yarn" | "bun";

const commandString = z.string().trim().min(1, "must be a non-empty command").refine((s) => !s.includes("\0"), "must not contain NUL");

/** One layer of verification config, every field optional. */
export const verificationConfigSchema = z.strictObject({
  timing: z.enum(["off", "before", "after", "both"]).optional(),
  mode: z.enum(["commands", "agent", "commands-and-agent"]).optional(),
  stages: z.array(z.enum(["typecheck", "test", "lint", "all", "custom"])).optional(),
  stageCommands: z.strictObject({ typecheck: commandString.optional(), test: commandString.optional(), lint: commandString.optional() }).optional(),
  commands: z.array(commandString).optional(),
  cache: z.enum(["off", "run", "persistent"]).optional(),
  maxAttempts: z.number().int().min(1).max(100).optional(),
  timeoutMs: z.number().int().min(1).optional(),
});

/** Per-tool settings: a `default` layer and one layer per tool name. */
export const verificationSettingsSchema = z.strictObject({
  default: verificationConfigSchema.optional(),
  tools: z.record(z.string().min(1), verificationConfigSchema).optional(),
});

/** One layer of verification config (input shape). */
export type VerificationConfig = z.infer<typeof verificationConfigSchema>;
/** Per-tool verification settings (input shape). */
export type VerificationSettings = z.infer<typeof verificationSettingsSchema>;

/** One command of a resolved policy, with the stage it came from. */
export interface VerificationCommand {
  readonly stage: VerificationStage;
  readonly command: string;
}

/** A complete policy: every field decided, stages expanded and de-duplicated, commands in run order. */
export interface VerificationPolicy {
  readonly tool: string;
  readonly timing: VerificationTiming;
  readonly mode: VerificationMode;
  readonly stages: readonly VerificationStage[];
  readonly commands: readonly VerificationCommand[];
  readonly cache: VerificationCacheMode;
  readonly maxAttempts: number;
  readonly timeoutMs: number;
  readonly packageManager: PackageManager;
}

/** Options of `resolveVerificationConfig` that are facts about the project rather than config. */
export interface ResolveVerificationOptions {
  /** Decides the default stage commands (see `defaultStageCommands`); npm when unknown. */
  packageManager?: PackageManager;
}

/** Built-in defaults: verify after the step with commands, all three stages, a per-run cache, one attempt, 10 min. */
export const VERIFICATION_DEFAULTS = {
  timing: "after",
  mode: "commands",
  stages: ["all"],
  cache: "run",
  maxAttempts: 1,
  timeoutMs: 600_000,
} as const;

/** The script each stage runs by default, through the project's package manager (`pnpm typecheck`, `npm test`…). */
export function defaultStageCommands(pm: PackageManager): Record<"typecheck" | "test" | "lint", string> {
  // npm needs `run` for scripts other than test, and `bun test` is bun's own runner, not the script;
  // pnpm and yarn resolve bare script names.
  const run = pm === "npm" || pm === "bun" ? `${pm} run` : pm;
  return { typecheck: `${run} typecheck`, test: pm === "bun" ? "bun run test" : `${pm} test`, lint: `${run} lint` };
}

/** Lockfile names in detection order: the first one present decides the package manager. */
export const LOCKFILES: readonly (readonly [string, PackageManager])[] = [
  ["pnpm-lock.yaml", "pnpm"],
  ["yarn.lock", "yarn"],
  ["bun.lockb", "bun"],
  ["bun.lock", "bun"],
  ["package-lock.json", "npm"],
  ["npm-shrinkwrap.json", "npm"],
];

/** The package manager implied by the lockfile names present in a directory (npm when none). */
export function packageManagerFromFiles(names: Iterable<string>): PackageManager {
  const present = new Set(names);
  return LOCKFILES.find(([name]) => present.has(name))?.[1] ?? "npm";
}

/**
 * The package manager of the project around `cwd`: the nearest directory (cwd, then its parents, stopping at
 * the one holding `.git`) that has a lockfile decides; npm when there is none.
 */
export async function detectPackageManager(cwd: string): Promise<PackageManager> {
  for (let dir = path.resolve(cwd); ; dir = path.dirname(dir)) {
    const names = await readdir(dir).catch(() => [] as string[]);
    if (LOCKFILES.some(([name]) => names.includes(name))) return packageManagerFromFiles(names);
    if (names.includes(".git") || path.dirname(dir) === dir) return "npm";
  }
}

function parseLayer<T>(schema: z.ZodType<T>, input: unknown, source: string): T {
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  const issue = schemaIssue(parsed.error, input, source);
  // The settings layer has no prefix: its root is the `config` argument itself.
  const field = source === "" && issue.field === "(root)" ? "config" : issue.field;
  throw workflowError("verification", "INVALID_CONFIG", `${field}: ${issue.reason}.`, {
    field,
    value: issue.value,
    hint: "see docs/verification.md for the accepted fields and values",
  });
}

/** Expands `all` and removes repeats, keeping the first position of each stage. */
export function expandStages(stages: readonly VerificationStageName[]): VerificationStage[] {
  const out: VerificationStage[] = [];
  for (const stage of stages) {
    const expanded: VerificationStage[] = stage === "all" ? ["typecheck", "test", "lint"] : [stage];
    for (const s of expanded) if (!out.includes(s)) out.push(s);
  }
  return out;
}

function mergeLayers(layers: readonly VerificationConfig[]): VerificationConfig {
  let merged: VerificationConfig = {};
  for (const layer of layers) {
    const stageCommands = { ...merged.stageCommands, ...layer.stageCommands };
    merged = { ...merged, ...layer, stageCommands };
  }
  return merged;
}

/**
 * The complete policy for `toolName`: `config` is per-tool settings (`{ default?, tools? }`), `override` one
 * layer on top. `custom` runs only the `commands` list; `commands` also run after the named stages. A command
 * string that appears twice (a stage and a custom command alike) runs once.
 */
export function resolveVerificationConfig(
  toolName: string,
  config?: unknown,
  override?: unknown,
  options: ResolveVerificationOptions = {},
): VerificationPolicy {
  const settings = parseLayer(verificationSettingsSchema, config ?? {}, "");
  const top = parseLayer(verificationConfigSchema, override ?? {}, "override");
  const m = mergeLayers([settings.default ?? {}, settings.tools?.[toolName] ?? {}, top]);
  const packageManager = options.packageManager ?? "npm";
  const stageCommands = { ...defaultStageCommands(packageManager), ...m.stageCommands };
  const stages = expandStages(m.stages ?? VERIFICATION_DEFAULTS.stages);
  const custom = m.commands ?? [];
  if (stages.includes("custom") && custom.length === 0) {
    throw workflowError("verification", "INVALID_CONFIG", `stages includes "custom" but commands is empty for tool ${toolName}.`, {
      field: "commands",
      value: custom,
      hint: 'list the custom commands in "commands", or drop "custom" from stages',
    });
  }
  const commands: VerificationCommand[] = [];
  const add = (stage: VerificationStage, command: string): void => {
    if (!commands.some((c) => c.command === command)) commands.push({ stage, command });
  };
  for (const stage of stages) if (stage !== "custom") add(stage, stageCommands[stage]);
  for (const command of custom) add("custom", command);
  return {
    tool: toolName,
    timing: m.timing ?? VERIFICATION_DEFAULTS.timing,
    mode: m.mode ?? VERIFICATION_DEFAULTS.mode,
    stages,
    commands,
    cache: m.cache ?? VERIFICATION_DEFAULTS.cache,
    maxAttempts: m.maxAttempts ?? VERIFICATION_DEFAULTS.maxAttempts,
    timeoutMs: m.timeoutMs ?? VERIFICATION_DEFAULTS.timeoutMs,
    packageManager,
  };
}

/** True when the policy runs at `moment` (`both` covers before and after). */
export function verifiesAt(policy: Pick<VerificationPolicy, "timing">, moment: "before" | "after"): boolean {
  return policy.timing === "both" || policy.timing === moment;
}
