/**
 * A tiny in-memory PlanStore: proof that another backend fits the interface and passes the contract suite
 * without callers changing. Not durable, single-process, for tests only.
 */
import { workflowError, type WorkflowError } from "@phasekit/core";
import type { JournalEntry } from "../../src/store/journal.js";
import { validateSlug } from "../../src/io/plan-paths.js";
import type { PlanRunEntry, PlanStore, StoreLock } from "../../src/store/plan-store.js";
import type { CheckpointStore } from "../../src/store/checkpoint-port.js";
import type { GcReport } from "../../src/store/retention.js";
import { createMemoryCheckpoints } from "./memory-checkpoints.js";
import { buildDocument, validateMetadata } from "../../src/store/metadata.js";
import type { WorkflowMetadata } from "../../src/store/metadata-schema.js";
import { newControlRequest, type ControlRequest, type ControlSignal } from "../../src/store/control-signals.js";

interface Run {
  text: string | null;
  journal: JournalEntry[];
  holder: { tool: string; controller: AbortController } | null;
  checkpoints?: CheckpointStore;
  control: Partial<Record<ControlSignal, ControlRequest>>;
}

/** Creates an empty in-memory store. */
export function createMemoryPlanStore(): PlanStore {
  const runs = new Map<string, Run>();
  const runOf = (slug: string): Run => {
    const v = validateSlug(slug);
    if (!v.ok) throw v.error;
    let r = runs.get(slug);
    if (r === undefined) runs.set(slug, (r = { text: null, journal: [], holder: null, control: {} }));
    return r;
  };
  const current = (slug: string, run: Run): { ok: true; metadata: WorkflowMetadata | null } | { ok: false; error: WorkflowError } => {
    if (run.text === null) return { ok: true, metadata: null };
    return validateMetadata(`memory:${slug}`, JSON.parse(run.text));
  };
  const guard = async <T>(fn: () => T): Promise<T | { ok: false; error: WorkflowError }> => {
    try {
      return fn();
    } catch (error) {
      return { ok: false, error: error as WorkflowError };
    }
  };
  return {
    planRoot: "memory:",
    async runDir(slug) {
      runOf(slug);
      return `memory:${slug}`;
    },
    readMetadata: (slug) => guard(() => current(slug, runOf(slug))),
    writeMetadata: (slug, next, expectedGeneration) =>
      guard(() => {
        const run = runOf(slug);
        if (next.slug !== slug) return { ok: false as const, error: workflowError("store", "INVALID_STATE", `slug mismatch ${next.slug}`, { field: "slug" }) };
        const cur = current(slug, run);
        if (!cur.ok) return cur;
        const found = cur.metadata?.generation ?? null;
        if (found !== expectedGeneration) {
          return { ok: false as const, error: workflowError("store", "STALE_GENERATION", `expected ${String(expectedGeneration)}, found ${String(found)}`, { value: found }) };
        }
        const built = buildDocument(`memory:${slug}`, next, (expectedGeneration ?? 0) + 1);
        if (!built.ok) return built;
        run.text = built.text;
        run.journal.push({ seq: run.journal.length + 1, generation: built.metadata.generation, at: built.metadata.updatedAt, event: "metadata", data: built.metadata });
        return { ok: true as const, metadata: built.metadata };
      }),
    readJournal: (slug) => guard(() => ({ ok: true as const, entries: [...runOf(slug).journal], torn: false, tornBytes: 0 })),
    appendJournal: (slug, entry) =>
      guard(() => {
        if (entry.event === "metadata") return { ok: false as const, error: workflowError("store", "INVALID_OPTIONS", "reserved event", { field: "event" }) };
        const run = runOf(slug);
        const full = { ...entry, seq: run.journal.length + 1 };
        run.journal.push(full);
        return { ok: true as const, entry: full };
      }),
    lock: (slug, options) =>
      guard(() => {
        const run = runOf(slug);
        if (run.holder !== null) {
          return { ok: false as const, error: workflowError("store", "LOCKED", `run ${slug} is locked by ${run.holder.tool}`, { holder: run.holder.tool }) };
        }
        const holder = { tool: options.owner.tool, controller: new AbortController() };
        run.holder = holder;
        const lock: StoreLock = {
          signal: holder.controller.signal,
          async assertHeld() {
            if (run.holder !== holder) throw workflowError("store", "LOCK_LOST", `lock of ${slug} lost`);
          },
          async release() {
            if (run.holder !== holder) return { ok: true, released: false };
            run.holder = null;
            return { ok: true, released: true };
          },
        };
        return { ok: true as const, lock };
      }),
    async list() {
      const out: PlanRunEntry[] = [];
      for (const slug of [...runs.keys()].sort()) {
        const r = current(slug, runs.get(slug) as Run);
        out.push(r.ok ? { slug, ok: true, metadata: r.metadata } : { slug, ok: false, error: r.error });
      }
      return out;
    },
    async checkpoints(slug) {
      const run = runOf(slug);
      return (run.checkpoints ??= createMemoryCheckpoints(slug));
    },
    async gc(options) {
      if (options.keep === undefined && options.olderThan === undefined) {
        throw workflowError("gc", "INVALID_OPTIONS", "gc needs keep or olderThan", { field: "keep" });
      }
      const report: GcReport = { removed: [], kept: [] };
      const finished: Array<{ slug: string; m: WorkflowMetadata }> = [];
      for (const [slug, run] of runs) {
        const r = current(slug, run);
        const entry = { slug, runDir: `memory:${slug}` };
        if (!r.ok) report.kept.push({ ...entry, reason: "corrupt-metadata" });
        else if (r.metadata === null) report.kept.push({ ...entry, reason: "no-metadata" });
        else if (!["completed", "cancelled", "failed"].includes(r.metadata.status)) report.kept.push({ ...entry, reason: "active" });
        else finished.push({ slug, m: r.metadata });
      }
      finished.sort((a, b) => Date.parse(b.m.updatedAt) - Date.parse(a.m.updatedAt) || a.slug.localeCompare(b.slug));
      const now = options.now().getTime();
      finished.forEach(({ slug, m }, i) => {
        const entry = { slug, runDir: `memory:${slug}`, status: m.status, updatedAt: m.updatedAt };
        const reason =
          options.olderThan !== undefined && now - Date.parse(m.updatedAt) > options.olderThan ? "older-than" : options.keep !== undefined && i >= options.keep ? "beyond-keep" : undefined;
        if (reason === undefined) report.kept.push({ ...entry, reason: "within-limits" });
        else if (runs.get(slug)?.holder) report.kept.push({ ...entry, reason: "locked" });
        else {
          if (!options.dryRun) runs.delete(slug);
          report.removed.push({ ...entry, reason });
        }
      });
      return report;
    },
    requestControl: (slug, signal, input = {}) =>
      guard(() => {
        const run = runOf(slug);
        const cur = current(slug, run);
        if (!cur.ok) return cur;
        const status = cur.metadata?.status;
        if (status === undefined) return { ok: false as const, error: workflowError("control", "NOT_FOUND", `no run ${slug}`, { value: slug }) };
        if (status === "completed" || status === "cancelled") return { ok: false as const, error: workflowError("run", "RUN_FINISHED", `run ${slug} is ${status}`, { value: status }) };
        if (signal === "pause" && (status !== "running" || run.holder === null)) return { ok: false as const, error: workflowError("control", "NOT_RUNNING", `run ${slug} is not running`, { value: status }) };
        const request = newControlRequest(signal, input.reason ?? `${signal} requested`, input.now);
        run.control[signal] = request;
        return { ok: true as const, request };
      }),
    readControl: (slug, signal) =>
      guard(() => {
        const c = runOf(slug).control;
        return { ok: true as const, request: (signal === undefined ? (c.stop ?? c.pause) : c[signal]) ?? null };
      }),
    clearControl: (slug, request) =>
      guard(() => {
        const c = runOf(slug).control;
        const same = JSON.stringify(c[request.signal]) === JSON.stringify(request);
        if (same) delete c[request.signal];
        return { ok: true as const, cleared: same };
      }),
    async close() {},
  };
}
