/**
 * Zod schemas for workflow definitions: what a user writes in a workflow file. Types come from the schemas.
 * Structural checks that need the whole set (references, cycles, duplicate ids) live in compile.ts.
 */
import { z } from "zod";
import type { DeepReadonly } from "../errors/deep-readonly.js";
import { KEY_PATTERN } from "./schema-keys.js";
import { BudgetsSchema, GatesSchema, ProgressSchema } from "./controls-schema.js";

/** `/command` names: letters, digits, '_' and '-' (pi-workflows 1.0.0's rule, so `codeReview` and `qa_pipeline` work). */
export const COMMAND_NAME_PATTERN = /^[A-Za-z0-9_-]+$/;
export { KEY_PATTERN } from "./schema-keys.js";

const key = z.string().regex(KEY_PATTERN, "must contain a visible character");
/** A tool name as written; pi-workflows keeps even "" (it matches no tool). */
const toolName = z.string();
/** A display text that must show something (pi-workflows: a non-empty string after trimming). */
const label = z.string().regex(KEY_PATTERN, "must contain a visible character");

/** Per-phase tool rules: a whitelist or a blacklist, never both (checked in compileDefinitions for a clear message). */
export const ToolRulesSchema = z.strictObject({
  whitelist: z.array(toolName).optional(),
  blacklist: z.array(toolName).optional(),
});

/** A concrete phase the agent works in. */
export const PhaseDefinitionSchema = z.strictObject({
  id: key,
  name: label,
  emoji: z.string().default(""),
  instructions: z.string().default(""),
  tools: ToolRulesSchema.optional(),
  /** Profile names; checked against `profiles` only when the workflow declares that list (pi-workflows has none). */
  availableProfiles: z.array(z.string()).optional(),
  /** Limits on this phase alone (counted from when the phase was entered); see docs/gates.md. */
  budgets: BudgetsSchema.optional(),
  /** No-progress thresholds for this phase (over the workflow's). */
  progress: ProgressSchema.optional(),
  /** Gates on leaving this phase: verify commands, a person's approval, and where a "no" goes. */
  gates: GatesSchema.optional(),
});

/** A reference to another workflow, run as a nested scope at this position. */
export const SubworkflowRefSchema = z.strictObject({
  subworkflow: key,
});

/** One entry of a workflow's phase list. */
export const PhaseEntrySchema = z.union([PhaseDefinitionSchema, SubworkflowRefSchema]);

/** A named agent profile a phase may hand work to. */
export const ProfileSchema = z.strictObject({
  name: z.string().min(1),
  description: z.string().default(""),
});

/** A workflow: an ordered list of phases and sub-workflow references, with its texts and limits. */
export const WorkflowDefinitionSchema = z.strictObject({
  name: label,
  /** What the workflow is for (lists, `{workflowDescription}`); `{description}` is the user's task, as in pi-workflows. */
  description: z.string().default(""),
  /** The `/command` that starts it; defaults to the workflow key when that is a valid command name. */
  commandName: z.string().optional(),
  /** Sent as the user's first message when the workflow starts; may use the template variables. */
  initialMessage: z.string().optional(),
  phases: z.array(PhaseEntrySchema),
  /** Whether the workflow is listed as a command (sub-workflow-only definitions set false). */
  show: z.boolean().default(true),
  loopable: z.boolean().default(true),
  /** How many times one scope of this workflow may loop back to its start; unlimited when absent. */
  maxLoops: z.number().int().min(0).optional(),
  sessionNamePrefix: z.string().optional(),
  /** Any number, as pi-workflows reads it (`description.slice(0, n)`); the adapter that names sessions decides. */
  sessionNameMaxLength: z.custom<number>((v) => typeof v === "number", "expected a number").meta({ type: "number" }).optional(),
  roleInstruction: z.string().optional(),
  advanceReminder: z.string().optional(),
  blockReasonTemplate: z.string().optional(),
  notDoneReminder: z.string().optional(),
  completionMessage: z.string().optional(),
  cancelledMessage: z.string().optional(),
  profiles: z.array(ProfileSchema).default([]),
  /** Limits on the whole run of this workflow; see docs/gates.md. */
  budgets: BudgetsSchema.optional(),
  /** No-progress thresholds for every phase of this workflow (a phase may set its own). */
  progress: ProgressSchema.optional(),
});

type Mutable = {
  ToolRules: z.infer<typeof ToolRulesSchema>;
  PhaseDefinition: z.infer<typeof PhaseDefinitionSchema>;
  SubworkflowRef: z.infer<typeof SubworkflowRefSchema>;
  Profile: z.infer<typeof ProfileSchema>;
  WorkflowDefinition: z.infer<typeof WorkflowDefinitionSchema>;
};
/** Tool rules of a phase (deep-readonly, as every compiled shape). */
export type ToolRules = DeepReadonly<Mutable["ToolRules"]>;
/** A concrete phase. */
export type PhaseDefinition = DeepReadonly<Mutable["PhaseDefinition"]>;
/** A reference to another workflow. */
export type SubworkflowRef = DeepReadonly<Mutable["SubworkflowRef"]>;
/** One entry of a workflow's phase list. */
export type PhaseEntry = PhaseDefinition | SubworkflowRef;
/** A named agent profile. */
export type Profile = DeepReadonly<Mutable["Profile"]>;
/** A compiled workflow definition (defaults applied). */
export type WorkflowDefinition = DeepReadonly<Mutable["WorkflowDefinition"]>;
/** What a user may write (defaults not yet applied). */
export type WorkflowDefinitionInput = z.input<typeof WorkflowDefinitionSchema>;

/** Narrows a phase entry to a sub-workflow reference. */
export function isSubworkflowRef(entry: PhaseEntry): entry is SubworkflowRef {
  return "subworkflow" in entry;
}
