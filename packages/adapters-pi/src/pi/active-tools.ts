/**
 * Phases hide their blocked tools: where the host has `getActiveTools` / `setActiveTools` (both hosts do), the
 * tools core would block now are taken out of the set declared to the model, so it is not offered what it may
 * not call. The call-time block in `tool_call` stays the guarantee (another extension may re-enable a tool).
 * The set the session had before a phase narrowed it is put back when no phase narrows it any more.
 */
import type { PiApi } from "./host.js";

/** Keeps the host's active tools in line with the current phase. */
export interface ActiveTools {
  /** Narrows (or restores) the active set for the tool rule `allowed`. */
  sync(allowed: (toolName: string) => boolean): void;
}

/** The sync for `pi`; a no-op on a host without the two methods. */
export function createActiveTools(pi: PiApi): ActiveTools {
  let before: string[] | undefined; // the session's own set while a phase narrows it
  let setByUs: string | undefined;
  return {
    sync(allowed) {
      if (typeof pi.getActiveTools !== "function" || typeof pi.setActiveTools !== "function") return;
      let current: string[];
      try {
        current = pi.getActiveTools();
      } catch {
        return; // no session bound yet: the next state change syncs
      }
      // The user (or another extension) changed the set since we narrowed it: that is the new baseline.
      if (before !== undefined && current.join("\0") !== setByUs) before = undefined;
      const base = before ?? current;
      const wanted = base.filter((name) => allowed(name));
      if (wanted.length === base.length) {
        if (before !== undefined) apply(before);
        before = undefined;
        setByUs = undefined;
        return;
      }
      before = base;
      if (wanted.join("\0") !== current.join("\0")) apply(wanted);
      setByUs = wanted.join("\0");
    },
  };

  function apply(names: string[]): void {
    try {
      pi.setActiveTools?.(names);
    } catch {
      // a host that refuses keeps its set; tool_call still blocks
    }
  }
}
