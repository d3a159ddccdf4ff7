/**
 * The records of a run's steps and commit intents as the port hands them out, whatever the backend keeps: the
 * one schema every store checks them against.
 */
import { z } from "zod";
import { MAX_STEP_ERROR_CHARS } from "./step-error.js";

const fingerprintSchema = z.string().regex(/^v1:sha256:[0-9a-f]{64}$/);
const time = z.iso.datetime({ offset: true });

/** One step's checkpoint record (format version 1). */
export const stepRecordSchema = z.strictObject({
  v: z.literal(1),
  kind: z.literal("step"),
  stepId: z.string().min(1).max(128),
  status: z.enum(["started", "completed", "failed"]),
  attempt: z.int().min(1),
  inputFingerprint: fingerprintSchema,
  outputFingerprint: fingerprintSchema.optional(),
  artifact: z.string().regex(/^artifacts\/[0-9a-f]{64}\.json$/).optional(),
  startedAt: time,
  finishedAt: time.optional(),
  error: z.string().max(MAX_STEP_ERROR_CHARS).optional(),
  /** Set by the store that read the record: a rerun mark written after it names this step (reuse-decision.ts). */
  superseded: z.literal(true).optional(),
  /** Set with `superseded` by the store that read it: the run ended after the mark without reaching this step (rerun-spent.ts). */
  rerunSpent: z.literal(true).optional(),
});

/** A commit intent (seed 003): recorded before `git commit`, marked committed after it. */
export const commitRecordSchema = z.strictObject({
  v: z.literal(1),
  kind: z.literal("commit"),
  id: z.string().min(1).max(128),
  status: z.enum(["intended", "committed"]),
  message: z.string().max(100_000),
  files: z.array(z.string().min(1).max(4096)).max(100_000),
  stepId: z.string().min(1).max(128).optional(),
  sha: z.string().regex(/^[0-9a-f]{7,64}$/).optional(),
  intendedAt: time,
  committedAt: time.optional(),
});

/** A step's checkpoint record. */
export type StepRecord = z.infer<typeof stepRecordSchema>;
/** A commit intent record. */
export type CommitRecord = z.infer<typeof commitRecordSchema>;
