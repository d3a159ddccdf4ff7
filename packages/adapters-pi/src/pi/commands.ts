/**
 * The slash commands: `/workflow <name> <task>`, `/cancel-workflow`, `/workflow-status`, `/workflow-resume <id>`.
 * Each cancels a pending countdown first: the user acted.
 */
import { active, contextPrompt, initialUserMessage, isLive, move, startRun, type WorkflowState } from "./core-bridge.js";
import type { Continuation } from "./continuation.js";
import type { PiCommandContext, PiCommandDefinition } from "./host.js";
import type { Runtime } from "./runtime.js";
import { checkPinned, recordPin } from "./pinned-definitions.js";
import { parseResumeArgs, type RaisedBudgets } from "./budget-args.js";
import { raiseBudgets } from "./run-controls.js";
import { approveCommand } from "./ui-approval.js";

/** Registers the four commands. */
export function createCommands(rt: Runtime, cont: Continuation): Record<string, PiCommandDefinition> {
  let lastCwd = process.cwd();
  const remember = (ctx: PiCommandContext): void => {
    lastCwd = ctx.cwd;
  };
  return {
    workflow: {
      description: "Start a workflow: /workflow <name> <task>",
      getArgumentCompletions(prefix) {
        if (rt.loaded === undefined) rt.reload({ cwd: lastCwd, hasUI: false, ui: SILENT_UI, sessionManager: { getBranch: () => [] } });
        const items = [...rt.registry.commands.entries()]
          .filter(([name]) => name.startsWith(prefix.trim()))
          .map(([name, key]) => ({ value: name, label: `${name} — ${rt.registry.workflows.get(key)?.name ?? key} (${rt.loaded?.sources.get(key)?.scope ?? "?"})` }));
        return items.length > 0 ? items : null;
      },
      async handler(args, ctx) {
        remember(ctx);
        cont.cancel(ctx.ui);
        await startCommand(rt, cont, args, ctx);
      },
    },
    "cancel-workflow": {
      description: "Cancel the active workflow at once",
      async handler(_args, ctx) {
        remember(ctx);
        cont.cancel(ctx.ui);
        await rt.claiming;
        const s = rt.state;
        if (s === null || !isLive(s)) return rt.tell(ctx, "No active workflow to cancel.");
        if (rt.drivenElsewhere === s.taskId) return rt.tell(ctx, `Run ${s.taskId} is driven by another session; cancel it there.`, "error");
        const r = move("cancel-now", s, rt.registry, rt.now());
        if (!r.ok) return rt.tell(ctx, `[phasekit] cancel refused: ${r.error.message}`, "error");
        const warning = await rt.commit(r.state, ctx);
        if (warning) rt.tell(ctx, warning, "warning");
        await rt.deliverEnd();
        rt.refreshUi(ctx);
      },
    },
    "workflow-status": {
      description: "Show the active workflow's phase and instructions",
      async handler(_args, ctx) {
        remember(ctx);
        cont.cancel(ctx.ui);
        const s = rt.state;
        const a = active(s, rt.registry);
        if (s === null || a === null) return rt.tell(ctx, s === null ? "No active workflow." : `Workflow ${s.workflowKey} (task ${s.taskId}) is ${s.status}.`);
        await rt.claiming;
        const held = rt.durable.heldSlug();
        rt.tell(ctx, `${contextPrompt(a, ctx.sessionManager.getBranch())}\n\nRun id: ${s.taskId}${held === s.taskId ? " (plan folder held by this session; /workflow-resume " + s.taskId + " continues it elsewhere)" : ""}`);
      },
    },
    "workflow-approve": {
      description: "Decide the approve gate of the current phase: /workflow-approve [<JSON payload> | reject <reason>]",
      async handler(args, ctx) {
        remember(ctx);
        cont.cancel(ctx.ui);
        await approveCommand(rt, args, ctx);
      },
    },
    "workflow-resume": {
      description: "Continue a workflow run from its plan folder: /workflow-resume <id> [turns=60 phase.cost=2 …: raise budgets]",
      async handler(args, ctx) {
        remember(ctx);
        cont.cancel(ctx.ui);
        await resumeCommand(rt, cont, args.trim(), ctx);
      },
    },
  };
}

const SILENT_UI: PiCommandContext["ui"] = { setStatus() {}, setWidget() {}, notify() {}, confirm: async () => false };

async function startCommand(rt: Runtime, cont: Continuation, args: string, ctx: PiCommandContext): Promise<void> {
  await rt.claiming; // whether the current run is driven elsewhere decides whether replacing it ends it
  rt.reload(ctx);
  // A new run starts on the files as they are now, even while the current run keeps pinned definitions.
  const registry = rt.loaded?.registry ?? rt.registry;
  const m = /^(\S+)\s*([\s\S]*)$/.exec(args.trim());
  const shown = [...registry.commands.keys()].sort().join(", ") || "(none)";
  if (m === null) return rt.tell(ctx, `Usage: /workflow <name> <task>. Available: ${shown}`);
  const name = m[1] as string;
  const task = (m[2] ?? "").trim();
  const key = registry.commands.get(name);
  if (key === undefined) {
    const hidden = registry.workflows.get(name);
    if (hidden !== undefined && !hidden.show) return rt.tell(ctx, `"${name}" can only run inside other workflows; it cannot be started directly.`, "error");
    return rt.tell(ctx, `Unknown workflow "${name}". Available: ${shown}`, "error");
  }
  if (task === "") return rt.tell(ctx, `Usage: /workflow ${name} <task>`, "warning");
  const current = rt.state;
  const cur = active(current, rt.registry);
  if (current !== null && isLive(current)) {
    const ok = await ctx.ui.confirm("A workflow is active", `Phase: ${cur?.phase.name ?? "?"}\nTask: ${current.taskDescription}\n\nReplace it with ${name}?`);
    if (!ok) return rt.tell(ctx, "Kept the active workflow.");
  }
  const taskId = await rt.newTaskId();
  const r = startRun(registry, key, taskId, task, rt.now());
  if (!r.ok) return rt.tell(ctx, `[phasekit] cannot start ${name}: ${r.error.message}`, "error");
  cont.resetBudget();
  if (current !== null && isLive(current) && rt.drivenElsewhere !== current.taskId) await endReplaced(rt, current, ctx);
  rt.state = r.state;
  rt.pin = undefined;
  rt.registry = registry;
  rt.drivenElsewhere = undefined;
  const claimed = await rt.durable.claim(ctx.cwd, r.state, rt.now());
  if (!claimed.ok) rt.tell(ctx, claimed.message, "warning");
  await rt.commit(r.state, ctx);
  await recordPin(rt, ctx, r.state, registry);
  const def = registry.workflows.get(key);
  const prefix = def?.sessionNamePrefix ?? "Workflow: ";
  const max = def?.sessionNameMaxLength ?? 50;
  rt.pi.setSessionName(`${prefix}${task.length > max ? `${task.slice(0, max)}…` : task}`);
  rt.pi.sendUserMessage(initialUserMessage(r.state, rt.registry));
}

/**
 * The run a new one replaces ends here, cancelled and marked notified (the user chose to replace it, so no
 * end message goes to the model): its session entry and its plan folder say so, and its lock is let go.
 */
async function endReplaced(rt: Runtime, old: WorkflowState, ctx: PiCommandContext): Promise<void> {
  const cancelled = move("cancel-now", old, rt.registry, rt.now());
  const marked = cancelled.ok ? move("mark-notified", cancelled.state, rt.registry, rt.now()) : cancelled;
  if (!marked.ok) return rt.tell(ctx, `[phasekit] the replaced run ${old.taskId} could not be ended: ${marked.error.message}`, "warning");
  const warning = await rt.commit(marked.state, undefined);
  if (warning) rt.tell(ctx, warning, "warning");
}

/** A run paused in this session (e.g. by `phasekit pause`) goes on where it stopped. */
async function unpause(rt: Runtime, cont: Continuation, s: WorkflowState, ctx: PiCommandContext, raised: RaisedBudgets | undefined): Promise<void> {
  const r = move("resume", s, rt.registry, rt.now());
  if (!r.ok) return rt.tell(ctx, `[phasekit] resume refused: ${r.error.message}`, "error");
  cont.resetBudget();
  if (raised !== undefined) raiseBudgets(rt, s.taskId, raised);
  const warning = await rt.commit(r.state, ctx);
  if (warning) rt.tell(ctx, warning, "warning");
  const a = active(r.state, rt.registry);
  rt.pi.sendUserMessage(`The workflow run ${s.taskId} was paused and goes on now, in ${a?.phase.name ?? "its current phase"}.`);
}

async function resumeCommand(rt: Runtime, cont: Continuation, args: string, ctx: PiCommandContext): Promise<void> {
  await rt.claiming;
  const parsed = parseResumeArgs(args);
  if (!parsed.ok) return rt.tell(ctx, `[phasekit] ${parsed.message}`, "error");
  const { id, raised } = parsed;
  const current = rt.state;
  if (current?.status === "paused" && (id === "" || id === current.taskId) && rt.drivenElsewhere !== current.taskId) return unpause(rt, cont, current, ctx, raised);
  if (id === "") return rt.tell(ctx, "Usage: /workflow-resume <id> (the run id /workflow-status shows)", "warning");
  rt.reload(ctx);
  if (current !== null && isLive(current) && current.taskId !== id && rt.drivenElsewhere !== current.taskId) {
    const ok = await ctx.ui.confirm("A workflow is active", `Task: ${current.taskDescription}\n\nLeave it and resume run ${id}?`);
    if (!ok) return rt.tell(ctx, "Kept the active workflow.");
  }
  const r = await rt.durable.resume(ctx.cwd, id);
  if (!r.ok) return rt.tell(ctx, r.message, "error");
  cont.resetBudget();
  rt.drivenElsewhere = undefined;
  rt.state = r.state;
  await checkPinned(rt, ctx);
  if (rt.state !== r.state) return; // cancelled or moved by the user's choice
  const a = active(r.state, rt.registry);
  if (a === null) {
    rt.state = current;
    await rt.durable.release();
    return rt.tell(ctx, `[phasekit] run ${id} (workflow ${r.state.workflowKey}) does not match the loaded definitions.`, "error");
  }
  await rt.commit(r.state, ctx);
  if (raised !== undefined) raiseBudgets(rt, id, raised);
  rt.pi.sendUserMessage(`Resume the workflow run ${id} (${a.definition.name}) where it stopped: ${a.phase.name}.`);
}
