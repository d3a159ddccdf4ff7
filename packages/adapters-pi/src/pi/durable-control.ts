/**
 * The control requests of the run a pi session holds (durable-runs.ts): pause, stop and approve requests filed by
 * `phasekit` or another session, read, taken, cleared; and a decision filed for the held run or a watched one.
 */
import type { PlanStore } from "../store/plan-store.js";
import { lostHandOff, takeRequest, type LostHandOff } from "../run/control-requests.js";
import type { RunAccess } from "./durable-access.js";
import type { DurableResult, DurableRuns } from "./durable-contract.js";
import { failed, thrownError, withoutFix } from "./durable-failure.js";
import type { Held } from "./durable-held.js";
import type { ControlRequest, ControlSignal } from "../store/control-signals.js";

/** The control methods of DurableRuns over the run `held()` returns (undefined: none held). */
export function heldRunControls(
  held: () => Held | undefined,
  access: RunAccess,
  enabled: boolean,
): Pick<DurableRuns, "pendingControl" | "takeControl" | "clearControl" | "requestControl"> {
  // The held run's failing stretch: its first failed read or take is told, the rest are not, until the store is
  // seen working for what failed. One stretch per run, not one per operation: an operation that is never tried
  // again (a take whose request was withdrawn) would keep its own stretch open for the rest of the run.
  // `taking`: the signal whose take failed; a read that works ends the stretch unless that request may still wait.
  let failing: { held: Held; taking?: ControlSignal } | undefined;
  const fails = (h: Held, taking?: ControlSignal): boolean => {
    const news = failing?.held !== h;
    const stretch: { held: Held; taking?: ControlSignal } = news || failing === undefined ? { held: h } : failing;
    if (taking !== undefined) stretch.taking = taking;
    failing = stretch;
    return news;
  };
  const works = (h: Held, read?: { signal: ControlSignal | undefined; request: ControlRequest | null }): void => {
    if (failing?.held !== h) return;
    const t = failing.taking;
    // A read that found none of the failed take's signal shows it gone (withdrawn, or taken by another holder).
    if (read === undefined || t === undefined || (read.request === null && (read.signal === undefined || read.signal === t))) failing = undefined;
  };
  return {
    async pendingControl(signal) {
      const h = held();
      if (h === undefined) return { request: null };
      const r = await h.control.readControl(h.slug, signal).catch((error: unknown) => ({ ok: false as const, error: thrownError(error) }));
      if (r.ok) {
        works(h, { signal, request: r.request });
        return { request: r.request };
      }
      if (!fails(h)) return { request: null };
      return { request: null, warning: failed(h.store, h.slug, r.error, "could not read the pause, stop and approve requests filed in", UNREAD).message };
    },
    takeControl: async (request) => {
      const h = held();
      if (h === undefined) return { ok: true, request: null };
      try {
        const taken = await takeRequest(h.store, h.slug, request, h.lock);
        works(h);
        return { ok: true, request: taken };
      } catch (error) {
        // Not taken, or taken and handed on to the run's new holder: the request is still pending somewhere and is
        // read again at the next boundary or by that holder. Only a pause taken here and refused back is lost.
        const lost = lostHandOff(error);
        if (lost !== undefined) return { ok: false, kind: "failed", message: notHandedOnText(h.slug, lost) };
        // A lost lock leaves the request to the run's new holder; a store that failed leaves it filed here, and
        // that is said once.
        const e = thrownError(error);
        if (e.code === "LOCK_LOST" || !fails(h, request.signal)) return { ok: true, request: null };
        const meanwhile = "Meanwhile this session goes on, and the request stays filed: it is tried again at the next step; this is not said again at every step.";
        return { ok: true, request: null, warning: failed(h.store, h.slug, e, `could not take the ${request.signal} request filed in`, meanwhile).message };
      }
    },
    async clearControl(request) {
      const h = held();
      if (h === undefined) return [];
      const warnings: string[] = [];
      const what = `the ${request.signal} request (honoured here)`;
      const cleared = await h.store.clearControl(h.slug, request).catch((error: unknown) => ({ ok: false as const, error: thrownError(error) }));
      if (!cleared.ok) warnings.push(failed(h.store, h.slug, cleared.error, `could not clear ${what} from`, "It is still filed for the run, where it can be read again.").message);
      const entry = { generation: h.generation ?? 0, at: new Date().toISOString(), event: `control-${request.signal}`, data: { reason: request.reason, by: "pi" } };
      const line = await h.store.appendJournal(h.slug, entry).catch((error: unknown) => ({ ok: false as const, error: thrownError(error) }));
      if (!line.ok) warnings.push(failed(h.store, h.slug, line.error, `could not journal ${what} in`, `The ${request.signal} took effect; only its line in the run's journal is missing.`).message);
      return warnings;
    },
    async requestControl(signal, input, watched) {
      const h = held();
      const file = async (store: PlanStore, slug: string): Promise<DurableResult<{ request: ControlRequest }>> => {
        const r = await store.requestControl(slug, signal, input).catch((error: unknown) => ({ ok: false as const, error: thrownError(error) }));
        return r.ok ? { ok: true, request: r.request } : failed(store, slug, r.error, `could not file the ${signal} request in`);
      };
      if (h !== undefined && (watched === undefined || watched.slug === h.slug)) return file(h.store, h.slug);
      if (watched === undefined || !enabled) return { ok: false, kind: "failed", message: "[phasekit] this session holds no run." };
      const opened = await access.openStore(watched.cwd);
      if (!opened.ok) return opened;
      try {
        return await file(opened.store, watched.slug);
      } finally {
        await opened.store.close().catch(() => undefined);
      }
    },
  };
}

/** What holds while the held run's requests cannot be read. */
const UNREAD =
  "Meanwhile this session goes on, and a request filed from outside (phasekit pause, stop or approve) waits until a read works again; this is not said again at every step.";

/** The user's words for a request this session took and could not hand on (`lostHandOff`): nothing of it unsaid. */
function notHandedOnText(slug: string, lost: LostHandOff): string {
  const { request, handOff } = lost;
  const refusal = `${handOff.code === undefined ? "" : `${handOff.code}: `}${withoutFix(handOff.message)}`;
  const effect = request.signal === "pause" ? "paused" : request.signal === "stop" ? "stopped" : "decided";
  return (
    `[phasekit] run ${slug}: this session took the ${request.signal} request ("${request.reason}", filed ${request.requestedAt} by pid ${request.requestedBy.pid} on ${request.requestedBy.host}), ` +
    `then lost the run (${withoutFix(lost.lock)}), and the store refused to file the request again for the run's next holder (${refusal}). ` +
    `It is pending nowhere now, and the run was not ${effect} by it.${lost.hint === "" ? "" : ` Fix: ${lost.hint}.`}`
  );
}
