/**
 * The event hooks. Session changes rebuild everything from the branch; `tool_call` asks core; the context
 * goes in before each prompt; the end of an agent run is handled at the first idle moment: `agent_settled`
 * where the host has it (1.5.x), else a timer after `agent_end` (inside `agent_end` 0.73.1 only queues
 * messages until the user's next prompt).
 */
import { active, contextPrompt, isLive, move } from "./core-bridge.js";
import type { Continuation, RunEnd } from "./continuation.js";
import type { PiApi, PiContext } from "./host.js";
import { MESSAGE, type Runtime } from "./runtime.js";
import { endAnnouncedOnBranch } from "./session-entries.js";
import { honourControl, lostPauseText } from "./control.js";
import { checkPinned } from "./pinned-definitions.js";

function refresh(rt: Runtime, ctx: PiContext): void {
  try {
    rt.refreshUi(ctx);
  } catch {
    // stale ctx: the next session event refreshes the UI
  }
}

/** How the last assistant message of a run ended. */
export function runEndOf(messages: readonly unknown[]): RunEnd {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i] as { role?: unknown; stopReason?: unknown } | undefined;
    if (m?.role === "assistant") return { aborted: m.stopReason === "aborted", errored: m.stopReason === "error" };
  }
  return { aborted: false, errored: false };
}

/** The `tool_call` answer for `toolName` now. */
function decisionOf(rt: Runtime, toolName: string): { block: true; reason: string } | undefined {
  const d = rt.decide(toolName);
  return d.allowed ? undefined : { block: true, reason: d.reason };
}

/** Registers every hook on `pi`. */
export function registerHooks(pi: PiApi, rt: Runtime, cont: Continuation): void {
  let settledHost = false;
  // After a restart the transcript may show a workflow_step call without its result (pi saves the extension's
  // entry before the tool result): the first context then says that the context, not the transcript, is current.
  let restarted = false;
  let lastEnd: RunEnd = { aborted: false, errored: false };
  const decision = (toolName: string) => decisionOf(rt, toolName);
  // The definition files changed since the last load: re-read them, and let the user choose for a live run.
  const recheck = async (ctx: PiContext): Promise<void> => {
    rt.reload(ctx);
    await checkPinned(rt, ctx);
    rt.refreshUi(ctx);
  };

  const onSession = async (ctx: PiContext, reason: string | undefined): Promise<void> => {
    rt.epoch += 1;
    restarted = reason === "startup" || reason === "resume" || reason === "reload";
    cont.cancel(ctx.ui);
    rt.reload(ctx);
    rt.rebuild(ctx);
    if ((await checkPinned(rt, ctx, { ask: false })) === "ask-later") {
      const epoch = rt.epoch;
      setTimeout(() => {
        if (epoch === rt.epoch) void checkPinned(rt, ctx).then(() => epoch === rt.epoch && rt.refreshUi(ctx)).catch(() => undefined);
      }, 0);
    }
    rt.refreshUi(ctx);
    const s = rt.state;
    rt.drivenElsewhere = undefined;
    if (s !== null && isLive(s) && rt.durable.enabled) {
      // The lock and the plan-folder write are not waited for here: pi's start-up goes on, and every move of the
      // run (a workflow_step, a command, the idle continuation) waits for this claim first (control.ts).
      const epoch = rt.epoch;
      rt.claiming = rt.durable.claim(ctx.cwd, s, rt.now()).then((claimed) => {
        if (claimed.ok || epoch !== rt.epoch) return;
        if (claimed.kind === "elsewhere") {
          rt.drivenElsewhere = s.taskId;
          rt.tell(ctx, `${claimed.message} This session shows the run but does not move it; /workflow-resume ${s.taskId} takes it over once that session has ended.`, "warning");
        } else {
          // The plan folder is unusable, and nobody else drives the run: this session keeps driving it (and can cancel it).
          rt.tell(ctx, claimed.message, "error");
        }
      }).catch(() => undefined);
    } else if (s !== null && !isLive(s) && !s.completionNotified && endAnnouncedOnBranch(ctx.sessionManager.getBranch())) {
      // Said already (pi-workflows sends the message before saving its flag): record it, say nothing.
      const marked = move("mark-notified", s, rt.registry, rt.now());
      if (marked.ok) await rt.commit(marked.state, ctx);
    } else if (s !== null && !isLive(s) && !s.completionNotified) {
      // A run that ended without its message (e.g. killed right after the last step): say it once, when idle.
      const epoch = rt.epoch;
      setTimeout(() => {
        if (epoch === rt.epoch) void rt.deliverEnd().catch(() => undefined);
      }, 0);
    }
  };

  const idle = async (ctx: PiContext, end: RunEnd): Promise<void> => {
    if ((await honourControl(rt, cont, ctx)) !== undefined) return refresh(rt, ctx);
    if (await rt.deliverEnd()) return refresh(rt, ctx);
    cont.onIdle(ctx, end);
  };

  pi.on("session_start", (e, ctx) => onSession(ctx, e.reason));
  pi.on("session_tree", (_e, ctx) => onSession(ctx, "tree"));
  pi.on("session_shutdown", async (_e, ctx) => {
    // Clear with this (still valid) ctx before the epoch moves on: an RPC client keeps widgets across sessions.
    cont.cancel(ctx?.ui);
    rt.epoch += 1;
    await rt.durable.release();
  });
  pi.on("turn_end", (e, ctx) => {
    rt.refreshUi(ctx);
    if (!Array.isArray(e.entries)) return undefined;
    const a = active(rt.state, rt.registry);
    if (a === null || a.state.status !== "running") return undefined;
    const key = contextKey(a.state);
    if (key === rt.contextGivenFor) return undefined;
    rt.contextGivenFor = key;
    return { entries: [{ type: "custom_message", customType: MESSAGE.context, content: contextPrompt(a, ctx.sessionManager.getBranch()), display: false }] };
  });
  pi.on("tool_call", (e, ctx) => {
    if (rt.definitionsDirty) return recheck(ctx).then(() => decision(e.toolName));
    return decision(e.toolName);
  });
  pi.on("before_agent_start", async (_e, ctx) => {
    cont.cancel(ctx.ui);
    const honoured = await honourControl(rt, cont, ctx);
    const a = active(rt.state, rt.registry);
    if (a === null || a.state.status !== "running") return undefined;
    rt.contextGivenFor = contextKey(a.state);
    // A pause lost at this prompt: the model learns that instead of the phase to go on with (turn_end adds
    // nothing either, the context counts as given); the restart note waits for the next context.
    if (honoured === "lost") return { message: { customType: MESSAGE.context, content: lostPauseText("prompt"), display: false } };
    const note = restarted && a.state.globalStepCount > 0 ? "\n\n(pi was restarted. This is the workflow's current state; an earlier workflow_step call shown without a result did take effect.)" : "";
    restarted = false;
    return { message: { customType: MESSAGE.context, content: contextPrompt(a, ctx.sessionManager.getBranch()) + note, display: false } };
  });
  pi.on("input", (e, ctx) => {
    if (e.source === "extension") return undefined;
    cont.cancel(ctx.ui);
    rt.disarmCancel();
    cont.resetBudget();
    return undefined;
  });
  pi.on("agent_end", (e, ctx) => {
    lastEnd = runEndOf(e.messages);
    rt.disarmCancel(); // a cancel armed in this agent run does not carry over to the next one
    if (settledHost) return;
    const epoch = rt.epoch;
    const end = lastEnd;
    setTimeout(() => {
      if (epoch === rt.epoch) void idle(ctx, end).catch(() => undefined);
    }, 0);
  });
  pi.on("agent_settled", (e, ctx) => idle(ctx, { aborted: e.aborted || lastEnd.aborted, errored: lastEnd.errored }));
  // pi 1.5.x fires agent_settled when truly idle; 0.73.1 never does. Known by what the host exports (1.5.x's
  // registerEntryRenderer), not by `on`'s return value, which a wrapping extension may not pass on.
  settledHost = hostHasSettled(pi);
  rt.boundaryTurns = settledHost;
}

/** Whether the host fires `agent_settled` (pi 1.5.x), probed by a member only 1.5.x exports. */
export function hostHasSettled(pi: PiApi): boolean {
  return typeof pi.registerEntryRenderer === "function";
}

/** Which state a context prompt was rendered for. */
export function contextKey(s: { taskId: string; generation: number }): string {
  return `${s.taskId}:${s.generation}`;
}
