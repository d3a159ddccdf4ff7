/**
 * Definitions pinned to the run. A run started here records, beside its state, the definitions of every
 * workflow it reaches (a `workflow:definitions` session entry; core records their fingerprints in the state).
 * When the files change under a live run (session start, resume, or the first tool call after a change) the
 * user sees core's diff (by phase id) and chooses among what works for this run: keep the pinned definitions,
 * move to the new ones (only where the current phase still exists: the position is carried over by phase id, so
 * an inserted or removed earlier phase does not move the run), restart the current scope (core's restartScope),
 * or cancel. Without a choice the run keeps its pinned definitions: it never moves silently.
 */
import { pinData, pinnedRegistry, type PinnedData } from "../run/definitions-pin.js";
import { definitionsUnchanged, diffText, reviewDefinitions } from "../run/definitions-review.js";
import { active, isLive, type WorkflowRegistry, type WorkflowState } from "./core-bridge.js";
import type { BranchEntry, PiContext } from "./host.js";
import type { Pin, Runtime } from "./runtime.js";

export { diffText, pinData, type PinnedData };

/** The custom entry type of a run's pinned definitions. */
export const DEFINITIONS_ENTRY = "workflow:definitions";

/** The newest pin of run `taskId` on the branch, compiled (once per entry). */
export function pinOnBranch(branch: readonly BranchEntry[], taskId: string): Pin | undefined {
  for (let i = branch.length - 1; i >= 0; i--) {
    const e = branch[i] as BranchEntry;
    if (e.type !== "custom" || e.customType !== DEFINITIONS_ENTRY) continue;
    const d = e.data as Partial<PinnedData> | undefined;
    if (d?.taskId !== taskId || typeof d.workflows !== "object" || d.workflows === null) continue;
    return pinOf(d, taskId);
  }
  return undefined;
}

/** Pin data (a session entry's, or the run history's) compiled once per object; undefined when it has errors. */
function pinOf(data: unknown, taskId: string): Pin | undefined {
  const registry = pinnedRegistry(data, taskId);
  return registry === undefined ? undefined : { taskId, registry };
}

/**
 * The run's pin: the one kept in memory, else the newest on this session's branch, else the one recorded in the
 * run's history (a run resumed in another session has none on its branch).
 */
async function findPin(rt: Runtime, ctx: PiContext, s: WorkflowState): Promise<Pin | undefined> {
  if (rt.pin?.taskId === s.taskId) return rt.pin;
  return pinOnBranch(ctx.sessionManager.getBranch(), s.taskId) ?? pinOf(await rt.durable.loadPin(s, rt.now()), s.taskId);
}

/**
 * Pins `state`'s run to `registry`: a session entry (it follows the session tree) and an entry of the run's
 * history (any session that resumes the run finds it). A history that cannot take it is said, not fatal.
 */
export async function recordPin(rt: Runtime, ctx: PiContext | undefined, state: WorkflowState, registry: WorkflowRegistry): Promise<void> {
  const data = pinData(state, registry);
  rt.pi.appendEntry(DEFINITIONS_ENTRY, data);
  const saved = await rt.durable.savePin(state, data, rt.now());
  if (!saved.ok) rt.tell(ctx, saved.message, "warning");
}

/** The choices, as the user reads them. */
export const CHOICE = {
  keep: "Keep the definitions the run started with",
  move: "Move to the new definitions (same phase)",
  "restart-scope": "Restart the current scope with the new definitions",
  cancel: "Cancel the run",
} as const;

/**
 * Checks the live run against the loaded definitions and, when they changed, asks what to do. Sets
 * `rt.registry` to what the run goes on with. Asks once per set of loaded files. With `ask: false` (inside
 * `session_start`, where pi reads no dialog answer until start-up is over) it only keeps the pinned
 * definitions for now and returns "ask-later"; the caller asks once pi is up.
 */
export async function checkPinned(rt: Runtime, ctx: PiContext, opts: { ask?: boolean } = {}): Promise<"ask-later" | undefined> {
  const s = rt.state;
  const loaded = rt.loaded?.registry;
  if (s === null || !isLive(s) || loaded === undefined) return undefined;
  // The run records the fingerprints of the definitions it goes on with: unchanged files need no pin at all.
  if (definitionsUnchanged(loaded, s)) {
    rt.pin = undefined;
    rt.registry = loaded;
    return undefined;
  }
  const pin = await findPin(rt, ctx, s);
  const v = reviewDefinitions(loaded, s, pin?.registry, rt.now());
  if (v.same) {
    rt.pin = undefined;
    rt.registry = loaded;
    return undefined;
  }
  const filesKey = [...loaded.fingerprints].join(",");
  if (rt.pinDecidedFor === `${s.taskId}|${filesKey}`) {
    rt.registry = rt.pin?.taskId === s.taskId ? rt.pin.registry : loaded;
    return undefined;
  }
  if (opts.ask === false && ctx.hasUI && typeof ctx.ui.select === "function") {
    rt.registry = pin?.registry ?? loaded;
    return "ask-later";
  }
  const { moved, restarted } = v;
  const options = v.choices.map((c) => CHOICE[c]);
  const title = `The workflow definitions changed under run ${s.taskId}:\n${v.text}${v.resolves ? "" : `\n${v.reason}`}`;
  const choice = ctx.hasUI && typeof ctx.ui.select === "function" ? await ctx.ui.select(title, options) : undefined;
  rt.pinDecidedFor = `${s.taskId}|${filesKey}`;
  if (choice === CHOICE.move && moved !== undefined) {
    rt.pin = undefined;
    rt.registry = loaded;
    await rt.commit(moved, ctx);
    await recordPin(rt, ctx, moved, loaded);
    rt.tell(ctx, `[phasekit] run ${s.taskId} moved to the new definitions; it stays in the same phase.`);
    return undefined;
  }
  if (choice === CHOICE["restart-scope"] && restarted !== undefined) {
    rt.pin = undefined;
    rt.registry = loaded;
    await rt.commit(restarted, ctx);
    await recordPin(rt, ctx, restarted, loaded);
    const a = active(restarted, loaded);
    rt.tell(ctx, `[phasekit] run ${s.taskId} restarted its current scope with the new definitions${a ? `, at ${a.phase.name}` : ""}.`);
    return undefined;
  }
  if (choice === CHOICE.cancel && v.cancelled !== undefined) {
    rt.registry = pin?.registry ?? loaded;
    await rt.commit(v.cancelled, ctx);
    await rt.deliverEnd();
    return undefined;
  }
  if (pin !== undefined) {
    rt.pin = pin;
    rt.registry = pin.registry;
    rt.tell(ctx, `[phasekit] run ${s.taskId} keeps the definitions it started with${choice === undefined ? " (no choice was made)" : ""}:\n${v.text}`, "warning");
    return undefined;
  }
  rt.registry = loaded;
  rt.tell(ctx, `[phasekit] the definitions changed under run ${s.taskId} and the run has no pinned copy:\n${v.text}${v.resolves ? "" : `\n${v.reason} /cancel-workflow ends it.`}`, "warning");
  return undefined;
}
