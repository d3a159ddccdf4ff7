/** `pause`, `stop`, `resume`, `cancel`: asking a run to change course, through the run's own request files and lock. */
import type { Command } from "commander";
import { cancelNow, migrateState, toPersisted, compileDefinitions, refusalToError } from "@phasekit/core";
import { clearControlRequest } from "../store/control-signals.js";
import { requestPause, requestStop } from "../run/control-requests.js";
import { createFsPlanStore } from "../store/plan-store.js";
import type { WorkflowMetadataInput } from "../store/metadata-schema.js";
import { common, type Common } from "./context.js";
import { EXIT, fail, JSON_SCHEMAS, printJson, type CliIo } from "./io.js";
import { analyzeResumeTarget } from "../run/resume-analysis.js";
import { isFinal, locateRun, runDetail } from "./run-view.js";

/** The tool name the CLI writes under when it changes a run itself (cancel of a run nobody runs). */
export const CLI_TOOL = "phasekit-cli";

/** Registers the control commands. */
export function registerControlCommands(program: Command, io: CliIo, setExit: (code: number) => void): void {
  for (const signal of ["pause", "stop"] as const) {
    program
      .command(signal)
      .description(signal === "pause" ? "ask a running run to pause at its next step (resumable)" : "ask a running run to stop at its next step (it ends cancelled)")
      .argument("<run>", "run id, slug or path")
      .argument("[reason...]", "why, recorded with the request")
      .action(async (target: string, words: string[], _o: unknown, cmd: Command) => {
        const c = common(cmd, io);
        const reason = words.length > 0 ? words.join(" ") : undefined;
        const request = await (signal === "pause" ? requestPause : requestStop)({ ...c.roots, target, ...(reason === undefined ? {} : { reason }) });
        report(io, c, { id: target, action: signal, request }, `${signal} requested for run ${target}: ${request.reason} (honoured at the run's next step)`);
      });
  }

  program
    .command("resume")
    .description("withdraw a pending pause request; for a paused run, say how its owner continues it")
    .argument("<run>", "run id, slug or path")
    .action(async (target: string, _o: unknown, cmd: Command) => {
      const c = common(cmd, io);
      const d = await runDetail(c.roots, target, io.now().getTime());
      const id = d.summary.id;
      if (d.pending?.signal === "pause") {
        await clearControlRequest(d.summary.runDir, d.pending);
        return report(io, c, { id, action: "resume", withdrawn: d.pending }, `pause request withdrawn: run ${id} goes on`);
      }
      if (isFinal(d.summary.status)) fail("cli", "NOT_PAUSED", `run ${id} is ${d.summary.status}: there is nothing to resume.`, { value: id });
      if (d.summary.status === "running") fail("cli", "NOT_PAUSED", `run ${id} is running and has no pending pause.`, { value: id });
      // The CLI cannot run the workflow's code: the owner does, by running the same target again.
      report(io, c, { id, action: "resume", ownerTool: d.summary.ownerTool }, `run ${id} is ${d.summary.status}; it continues when ${d.summary.ownerTool ?? "its owner"} runs target ${id} again`);
    });

  program
    .command("inspect")
    .description("could tool T resume this run? (not-found / ambiguous / unreadable / owned-by-other / resumable; exit 0 only for resumable)")
    .argument("<run>", "run id, slug or path")
    .requiredOption("--tool <name>", "the tool that would resume it")
    .action(async (target: string, o: { tool: string }, cmd: Command) => {
      const c = common(cmd, io);
      const a = await analyzeResumeTarget({ ...c.roots, target, invokedTool: o.tool });
      io.stdout.write(`${JSON.stringify(a, null, 2)}\n`);
      if (a.kind !== "resumable") setExit(a.kind === "not-found" ? EXIT.notFound : EXIT.failed);
    });

  program
    .command("cancel")
    .description("end a run as cancelled: a live run is asked to stop; a paused or crashed one is cancelled at once under its lock")
    .argument("<run>", "run id, slug or path")
    .argument("[reason...]", "why, recorded as the failure reason")
    .action(async (target: string, words: string[], _o: unknown, cmd: Command) => {
      const c = common(cmd, io);
      const reason = words.length > 0 ? words.join(" ") : "cancelled from the command line";
      const d = await runDetail(c.roots, target, io.now().getTime());
      const id = d.summary.id;
      if (isFinal(d.summary.status)) fail("cli", "NOT_RUNNING", `run ${id} is already ${d.summary.status}.`, { value: id });
      if (d.summary.status === "running") {
        const request = await requestStop({ ...c.roots, target: d.summary.runDir, reason });
        return report(io, c, { id, action: "stop", request }, `run ${id} is live: stop requested (${reason}); it ends cancelled at its next step`);
      }
      await cancelStored(c, target, reason, io.now());
      report(io, c, { id, action: "cancel", reason }, `run ${id} cancelled: ${reason}`);
    });
}

/** Cancels a run nobody is running: under its lock, compare-and-set on its generation, core state cancelled too. */
async function cancelStored(c: Common, target: string, reason: string, now: Date): Promise<void> {
  const location = await locateRun(c.roots, target);
  const store = createFsPlanStore({ repoRoot: c.roots.repoRoot, planRoot: location.planRoot });
  try {
    const locked = await store.lock(location.slug, { owner: { tool: CLI_TOOL }, retries: 0 });
    if (!locked.ok) throw locked.error;
    try {
      const read = await store.readMetadata(location.slug);
      if (!read.ok) throw read.error;
      if (read.metadata === null) fail("cli", "NOT_FOUND", `run ${location.slug} has no workflow.json.`, { value: location.slug });
      const { schemaVersion: _v, generation, ...m } = read.metadata;
      const next: WorkflowMetadataInput = { ...m, status: "cancelled", failureReason: reason, currentTool: CLI_TOOL, updatedAt: now.toISOString() };
      if (m.state !== undefined) {
        const state = migrateState(m.state);
        if (!state.ok) throw refusalToError(state.error);
        // Cancelling reads no definition; the CLI has none loaded here, so an empty compiled registry serves.
        const none = compileDefinitions({});
        const cancelled = none.ok ? cancelNow(none.registry, state.state, { now: now.getTime() }) : none;
        if (cancelled.ok) next.state = toPersisted(cancelled.state);
      }
      const w = await (locked.lock.store ?? store).writeMetadata(location.slug, next, generation);
      if (!w.ok) throw w.error;
    } finally {
      await locked.lock.release();
    }
  } finally {
    await store.close();
  }
}

function report(io: CliIo, c: Common, body: object, text: string): void {
  if (c.json) printJson(io, JSON_SCHEMAS.control, body);
  else io.stdout.write(`${text}\n`);
}
