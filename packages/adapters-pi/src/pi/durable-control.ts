/**
 * The control requests of the run a pi session holds (durable-runs.ts): pause, stop and approve requests filed by
 * `phasekit` or another session, read, taken, cleared; and a decision filed for the held run or a watched one.
 */
import type { WorkflowError } from "@phasekit/core";
import type { PlanStore } from "../store/plan-store.js";
import { lostHandOff, takeRequest, type LostHandOff } from "../run/control-requests.js";
import type { RunAccess } from "./durable-access.js";
import type { DurableResult, DurableRuns } from "./durable-contract.js";
import { failed, withoutFix } from "./durable-failure.js";
import type { Held } from "./durable-held.js";
import type { ControlRequest } from "../store/control-signals.js";

/** The control methods of DurableRuns over the run `held()` returns (undefined: none held). */
export function heldRunControls(
  held: () => Held | undefined,
  access: RunAccess,
  enabled: boolean,
): Pick<DurableRuns, "pendingControl" | "takeControl" | "clearControl" | "requestControl"> {
  return {
    async pendingControl(signal) {
      const h = held();
      if (h === undefined) return null;
      const r = await h.store.readControl(h.slug, signal).catch(() => undefined);
      return r?.ok ? r.request : null;
    },
    takeControl: async (request) => {
      const h = held();
      if (h === undefined) return { ok: true, request: null };
      try {
        return { ok: true, request: await takeRequest(h.store, h.slug, request, h.lock) };
      } catch (error) {
        // Not taken, or taken and handed on to the run's new holder: the request is still pending somewhere and is
        // read again at the next boundary or by that holder. Only a pause taken here and refused back is lost.
        const lost = lostHandOff(error);
        return lost === undefined ? { ok: true, request: null } : { ok: false, kind: "failed", message: notHandedOnText(h.slug, lost) };
      }
    },
    async clearControl(request) {
      const h = held();
      if (h === undefined) return;
      await h.store.clearControl(h.slug, request).catch(() => undefined);
      await h.store.appendJournal(h.slug, { generation: h.generation ?? 0, at: new Date().toISOString(), event: `control-${request.signal}`, data: { reason: request.reason, by: "pi" } }).catch(() => undefined);
    },
    async requestControl(signal, input, watched) {
      const h = held();
      const file = async (store: PlanStore, slug: string): Promise<DurableResult<{ request: ControlRequest }>> => {
        const r = await store.requestControl(slug, signal, input).catch((error: unknown) => ({ ok: false as const, error: error as WorkflowError }));
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
