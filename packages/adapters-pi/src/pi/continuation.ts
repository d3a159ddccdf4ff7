/**
 * Keeping the agent going without hot loops. When a run's agent stops without finishing, a countdown (a widget
 * with UI, a message without) leads to the not-done reminder. Reminders are capped per lack of progress: after
 * `maxReminders` reminders at the same state generation it stops and says so; any move of the run resets the
 * count. An aborted or errored run pauses reminders. Timers carry the session epoch and touch neither a stale
 * `ctx` nor a newer session.
 */
import { active, notDoneReminder } from "./core-bridge.js";
import type { PiContext } from "./host.js";
import { MESSAGE, UI_KEY, type Runtime } from "./runtime.js";

/** How the agent's run ended. */
export interface RunEnd {
  readonly aborted: boolean;
  readonly errored: boolean;
}

/** The countdown and reminder budget. */
export interface Continuation {
  /**
   * Stops a pending countdown (a command, a tool call, user input, a session change). The widget is cleared
   * through `ui`, the caller's current one, so a ctx from before a session change is never touched.
   */
  cancel(ui?: PiContext["ui"]): void;
  /** Forgets the reminder count and ends a hold (the user spoke, or a new run started). */
  resetBudget(): void;
  /**
   * Sends no reminder until `resetBudget`: the model was told to wait for the user (a pause lost, control.ts), and
   * "you must not stop yet" would tell it the opposite.
   */
  hold(): void;
  /** The agent is idle after a run: remind it if the workflow is still running. */
  onIdle(ctx: PiContext, end: RunEnd): void;
  /** Reminders sent at the current generation (for tests and status). */
  remindersWithoutProgress(): number;
}

/** Creates the continuation logic of one extension instance. */
export function createContinuation(rt: Runtime): Continuation {
  let timers: ReturnType<typeof setTimeout>[] = [];
  let widgetUi: PiContext["ui"] | undefined;
  let widgetEpoch = -1;
  // Shown until some live ui cleared it: an RPC client keeps a widget across a session change, so the next
  // session's ui must clear what an older one set.
  let widgetShown = false;
  let stopSaidFor = "";
  let count = 0;
  let atGeneration = -1;
  let atTask = "";
  let capSaid = false;
  let holding = false;
  const resetCount = (): void => {
    count = 0;
    capSaid = false;
    stopSaidFor = "";
  };

  const clearTimers = (): void => {
    for (const t of timers) clearTimeout(t);
    timers = [];
  };
  const clearWidget = (current?: PiContext["ui"]): void => {
    if (!widgetShown) return;
    const ui = current ?? (widgetEpoch === rt.epoch ? widgetUi : undefined);
    widgetUi = undefined;
    if (ui === undefined) return;
    widgetShown = false;
    try {
      ui.setWidget(UI_KEY.countdown, undefined);
    } catch {
      // a host that throws here has nothing left to clear
    }
  };

  const api: Continuation = {
    cancel(ui) {
      clearTimers();
      clearWidget(ui);
    },
    resetBudget() {
      resetCount();
      holding = false;
    },
    hold() {
      holding = true;
    },
    remindersWithoutProgress: () => count,
    onIdle(ctx, end) {
      api.cancel(ctx.ui);
      const s = rt.state;
      const a = active(s, rt.registry);
      if (s === null || a === null || s.status !== "running") return;
      // pi 1.5.x says how it runs: a one-shot print/json run ends after its prompt, so nobody is there to remind.
      if (ctx.mode === "print" || ctx.mode === "json") return;
      if (rt.drivenElsewhere === s.taskId) return; // the session that holds the run keeps it going
      if (holding) return;
      if (s.taskId !== atTask || s.generation !== atGeneration) {
        atTask = s.taskId;
        atGeneration = s.generation;
        resetCount(); // progress, not the user: a hold stays
      }
      if (end.aborted || end.errored) {
        // pi 0.73.1 retries an errored request itself and ends the agent run after each try: say it once per state.
        const key = `${s.taskId}:${s.generation}:${end.aborted ? "aborted" : "errored"}`;
        if (stopSaidFor === key) return;
        stopSaidFor = key;
        rt.tell(ctx, `[phasekit] the agent ${end.aborted ? "was stopped" : "ended with an error"}; the workflow waits in ${a.phase.name}. Send a message to go on.`);
        return;
      }
      if (count >= rt.options.maxReminders) {
        if (!capSaid) {
          capSaid = true;
          const text = `[phasekit] stopped reminding: ${count} reminder(s) without progress in ${a.phase.name}. The workflow stays active; /workflow-status shows it, /cancel-workflow ends it.`;
          rt.pi.sendMessage({ customType: MESSAGE.notice, content: text, display: true }, { triggerTurn: false });
        }
        return;
      }
      count += 1;
      const reminder = notDoneReminder(a);
      const epoch = rt.epoch;
      const live = (): boolean => epoch === rt.epoch && rt.state?.taskId === s.taskId && rt.state.generation === s.generation && rt.state.status === "running";
      const total = rt.options.countdownMs;
      const fire = (): void => {
        clearTimers();
        clearWidget();
        if (!live()) return;
        try {
          rt.pi.sendUserMessage(reminder);
        } catch {
          // the user started typing (the agent is busy): their message wins over the reminder
        }
      };
      const seconds = Math.max(1, Math.ceil(total / 1000));
      const line = (left: number): string[] => [`⏳ Workflow not done: reminding the agent in ${left}s… (type anything to interrupt)`];
      if (ctx.hasUI) {
        widgetUi = ctx.ui;
        widgetEpoch = epoch;
        widgetShown = true;
        try {
          ctx.ui.setWidget(UI_KEY.countdown, line(seconds), { placement: "aboveEditor" });
        } catch {
          widgetUi = undefined;
          widgetShown = false;
        }
        for (let left = seconds - 1; left > 0; left--) {
          const at = total - left * (total / seconds);
          timers.push(setTimeout(() => {
            if (!live()) return api.cancel();
            // live() also checked the epoch: widgetUi belongs to the current session
            try {
              widgetUi?.setWidget(UI_KEY.countdown, line(left), { placement: "aboveEditor" });
            } catch {
              api.cancel();
            }
          }, at));
        }
      } else {
        rt.pi.sendMessage({ customType: MESSAGE.countdown, content: `Workflow not done: reminding the agent in ${seconds}s (reminder ${count}/${rt.options.maxReminders}).`, display: true }, { triggerTurn: false });
      }
      timers.push(setTimeout(fire, total));
    },
  };
  return api;
}
