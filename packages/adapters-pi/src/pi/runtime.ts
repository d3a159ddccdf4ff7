/**
 * The extension's memory for one pi process: the loaded definitions, the current run's state, and the steps
 * every change goes through — persist first (session entry, then plan folder), then effects (status bar,
 * widget, messages). Hooks, the tool and the commands all change state through `commit`.
 */
import { generateRunId } from "../run/id.js";
import { active, emptyRegistry, endOfRunText, isLive, move, readState, statusLine, toolDecision, toPersisted, type WorkflowRegistry, type WorkflowState } from "./core-bridge.js";
import { defaultDefinitionRoots, definitionFoldersSignature, loadDefinitionFolders, type DefinitionLoadProblem, type DefinitionRoots, type LoadedDefinitions } from "./definition-folders.js";
import * as fs from "node:fs";
import { createActiveTools } from "./active-tools.js";
import { createDurableRuns } from "./durable-runs.js";
import type { DurableRuns } from "./durable-contract.js";
import type { PlanStore } from "../store/plan-store.js";
import type { PiApi, PiContext } from "./host.js";
import { COMPLETE_MESSAGE, rebuildState, rememberWritten, STATE_ENTRY } from "./session-entries.js";
import { phaseListWidget } from "./widget.js";

/** Options of `createWorkflowExtension`. Every field has a default. */
export interface WorkflowExtensionOptions {
  /** Definition folders; default global `$PI_CODING_AGENT_DIR/workflows` and project `<cwd>/.pi/workflows`. */
  readonly roots?: ((cwd: string) => DefinitionRoots) | undefined;
  /** Grace period before the not-done reminder (default 3000 ms). */
  readonly countdownMs?: number | undefined;
  /** Reminders sent without progress before the extension stops reminding (default 3). */
  readonly maxReminders?: number | undefined;
  /** Plan folder root relative to the session's cwd (default `ai_plan`); `false` keeps runs in the session only. */
  readonly planRoot?: string | false | undefined;
  /**
   * The plan store for a session's cwd, when runs should live elsewhere than the local plan folder (for example
   * `openPostgresPlanStore` from `@phasekit/store-postgres`, shared by several machines). Default: the fs store.
   */
  readonly store?: ((cwd: string) => PlanStore) | undefined;
  /** Clock (epoch ms). */
  readonly now?: (() => number) | undefined;
  /** Run ids (default: 8 random base-36 characters). */
  readonly newTaskId?: (() => Promise<string>) | undefined;
}

/** Custom message types this extension sends. */
export const MESSAGE = {
  context: "workflow:context",
  complete: COMPLETE_MESSAGE,
  countdown: "workflow:countdown",
  notice: "workflow:notice",
} as const;

/** Status bar / widget keys. */
export const UI_KEY = { status: "workflow", phases: "workflow-phases", countdown: "workflow-countdown" } as const;

/** The definitions a run goes on with (pinned-definitions.ts), compiled. */
export interface Pin {
  readonly taskId: string;
  readonly registry: WorkflowRegistry;
}

/** The shared state of the extension. */
export interface Runtime {
  readonly pi: PiApi;
  readonly options: Required<Pick<WorkflowExtensionOptions, "countdownMs" | "maxReminders">> & WorkflowExtensionOptions;
  readonly durable: DurableRuns;
  state: WorkflowState | null;
  registry: WorkflowRegistry;
  loaded: LoadedDefinitions | undefined;
  /**
   * The host appends entries returned from `turn_end` to the running context (pi 1.5.x): a phase change inside
   * a run then reaches the model as the hidden context message, and workflow_step's result stays short.
   */
  boundaryTurns: boolean;
  /** Set when another live session holds this run's plan folder: this session shows the run but does not move it. */
  drivenElsewhere: string | undefined;
  /** `taskId:generation` of the state whose context the model was last given. */
  contextGivenFor: string | undefined;
  /** The pinned definitions the live run goes on with, when the user kept them over changed files. */
  pin: Pin | undefined;
  /** `taskId|fingerprints` of the loaded files the user already chose for (asked once per change). */
  pinDecidedFor: string | undefined;
  /** Set when a definition folder changed on disk since the last load (watched). */
  definitionsDirty: boolean;
  /** Increases on every session change: a timer armed in an older session does nothing. */
  epoch: number;
  /**
   * The claim of the run's plan folder that session_start started and did not wait for (it is off the critical path
   * of pi's start-up). Whatever moves the run or reads `drivenElsewhere` waits for it first (control.ts).
   */
  claiming: Promise<void>;
  now(): number;
  newTaskId(): Promise<string>;
  /** Reloads the definition folders for `ctx.cwd`; new problems are shown once. */
  reload(ctx: PiContext): void;
  /** Rebuilds the state from the branch (newest valid entry), saying once when a newer entry was unreadable. */
  rebuild(ctx: PiContext): void;
  /** Persists `next` (session entry, then plan folder) and refreshes the UI. Returns a plan-folder warning, if any. */
  commit(next: WorkflowState, ctx: PiContext | undefined): Promise<string | undefined>;
  /** Sets the status bar and phase widget from the current state. */
  refreshUi(ctx: PiContext): void;
  /** Sends the end-of-run message once (the notified flag is persisted before the message goes out). */
  deliverEnd(): Promise<boolean>;
  /** The tool rule for `toolName` now (core's decision, remembered until the state or definitions change). */
  decide(toolName: string): { allowed: true } | { allowed: false; reason: string };
  /** Forgets an armed (unconfirmed) cancel: the agent run ended, or the user spoke. */
  disarmCancel(): void;
  /** Says something to the user: a notification with UI, stderr without. */
  tell(ctx: PiContext | undefined, text: string, level?: "info" | "warning" | "error"): void;
}

/** Creates the runtime. */
export function createRuntime(pi: PiApi, options: WorkflowExtensionOptions): Runtime {
  const shown = new Set<string>();
  // tool_call runs on every tool call while the state changes a few times per phase: decide once per tool name.
  let decisions = new Map<string, ReturnType<typeof toolDecision>>();
  let decidedFor: { state: WorkflowState | null; registry: WorkflowRegistry } | undefined;
  const now = options.now ?? Date.now;
  const activeTools = createActiveTools(pi);
  // Definition folders are watched, so a change under a live run is seen at the next tool call without reading
  // the folders on every call. A root that cannot be watched is re-read at session start and resume only.
  const watched = new Map<string, fs.FSWatcher | null>();
  let loadedSignature: string | undefined;
  const watchRoots = (roots: DefinitionRoots): void => {
    for (const dir of [roots.global, roots.project]) {
      if (dir === undefined || watched.get(dir)) continue;
      try {
        const w = fs.watch(dir, { recursive: true, persistent: false }, () => void (rt.definitionsDirty = true));
        w.on("error", () => {
          watched.set(dir, null); // e.g. the folder was removed: watched again at the next load
          rt.definitionsDirty = true;
        });
        watched.set(dir, w);
      } catch {
        watched.set(dir, null); // missing now: tried again at the next reload
      }
    }
  };
  const rt: Runtime = {
    pi,
    options: { ...options, countdownMs: options.countdownMs ?? 3000, maxReminders: options.maxReminders ?? 3 },
    durable: createDurableRuns({ planRoot: options.planRoot, ...(options.store ? { store: options.store } : {}) }, readState),
    state: null,
    registry: emptyRegistry(),
    loaded: undefined,
    boundaryTurns: false,
    pin: undefined,
    pinDecidedFor: undefined,
    definitionsDirty: false,
    drivenElsewhere: undefined,
    contextGivenFor: undefined,
    epoch: 0,
    claiming: Promise.resolve(),
    now,
    newTaskId: options.newTaskId ?? (() => generateRunId(() => false)),
    reload(ctx) {
      const roots = (options.roots ?? defaultDefinitionRoots)(ctx.cwd);
      // Nothing changed since the last load (same files, sizes and times): keep it. A session change then costs a
      // few stats instead of YAML parsing.
      const signature = definitionFoldersSignature(roots);
      if (rt.loaded !== undefined && loadedSignature === signature) {
        rt.definitionsDirty = false;
        rt.registry = rt.pin !== undefined && rt.pin.taskId === rt.state?.taskId ? rt.pin.registry : rt.loaded.registry;
        return;
      }
      loadedSignature = signature;
      watchRoots(roots);
      rt.definitionsDirty = false;
      rt.loaded = loadDefinitionFolders(roots);
      rt.registry = rt.pin !== undefined && rt.pin.taskId === rt.state?.taskId ? rt.pin.registry : rt.loaded.registry;
      for (const p of rt.loaded.problems) {
        const text = problemText(p);
        if (shown.has(text)) continue;
        shown.add(text);
        rt.tell(ctx, text, "warning");
      }
    },
    rebuild(ctx) {
      const r = rebuildState(ctx.sessionManager.getBranch());
      rt.state = r.state;
      const newest = r.skipped[0];
      if (newest !== undefined) {
        const text = `[phasekit] the newest workflow state entry on this branch is unreadable (${newest.error.message}); ${r.state ? "using the newest readable one" : "no workflow is active"}.`;
        if (!shown.has(text)) {
          shown.add(text);
          rt.tell(ctx, text, "warning");
        }
      }
    },
    async commit(next, ctx) {
      rt.state = next;
      const data = toPersisted(next);
      pi.appendEntry(STATE_ENTRY, data);
      rememberWritten(data, next);
      // The session shows the new state at once (the tools offered, the status line): a prompt sent while the plan
      // folder's copy is still being written must not reach the model with the old phase's tools.
      if (ctx !== undefined) rt.refreshUi(ctx);
      const d = await rt.durable.write(next, now());
      return d.ok ? undefined : d.message;
    },
    refreshUi(ctx) {
      activeTools.sync((name) => rt.decide(name).allowed);
      const a = active(rt.state, rt.registry);
      ctx.ui.setStatus(UI_KEY.status, a === null ? undefined : statusLine(a));
      if (ctx.hasUI) ctx.ui.setWidget(UI_KEY.phases, a === null ? undefined : phaseListWidget(a));
    },
    async deliverEnd() {
      const s = rt.state;
      if (s === null || isLive(s) || s.completionNotified) return false;
      const text = endOfRunText(s, rt.registry) ?? `[phasekit] workflow ${s.workflowKey} ended (${s.status}); task ${s.taskId}.`;
      const marked = move("mark-notified", s, rt.registry, now());
      if (!marked.ok) return false;
      await rt.commit(marked.state, undefined);
      pi.sendMessage({ customType: MESSAGE.complete, content: text, display: true, details: { status: s.status, taskId: s.taskId } }, { triggerTurn: false });
      return true;
    },
    decide(toolName) {
      if (decidedFor?.state !== rt.state || decidedFor.registry !== rt.registry) {
        decisions = new Map();
        decidedFor = { state: rt.state, registry: rt.registry };
      }
      let d = decisions.get(toolName);
      if (d === undefined) {
        d = toolDecision(rt.state, rt.registry, toolName);
        decisions.set(toolName, d);
      }
      return d;
    },
    disarmCancel() {
      if (rt.state?.cancelPending) rt.state = { ...rt.state, cancelPending: false };
    },
    tell(ctx, text, level = "info") {
      if (ctx?.hasUI) ctx.ui.notify(text, level);
      // Without UI (print mode) a notice must not enter the model's context: stderr is where pi's own warnings go.
      else console.error(text);
    },
  };
  return rt;
}

function problemText(p: DefinitionLoadProblem): string {
  return `[phasekit] workflow definition: ${p.message}`;
}
