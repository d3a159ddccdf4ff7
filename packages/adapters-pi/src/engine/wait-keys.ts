/**
 * The history keys of a durable wait (`ctx.sleep`, `ctx.waitForApproval`, run/waits.ts): its start (when it began,
 * when it is due), its end (the outcome), and the due time a resumed wait recorded again. Built here and taken apart
 * here: the waits write them and `phasekit resume-due` reads them, so the format has one home.
 *
 *   phasekit:sleep#1                  end of the first sleep
 *   phasekit:approval-start:ship#2    start of the second approval wait named "ship"
 *   phasekit:sleep-due#1              the first sleep's due time, recorded again by a resumed body
 */
import { RESERVED_STEP_PREFIX } from "./reserved-keys.js";

/** The kinds of durable wait. */
export type WaitKind = "sleep" | "approval";

/** Which of a wait's entries a key names. */
export type WaitRole = "start" | "end" | "due";

/** A wait entry's key, taken apart. `name` is "" for a wait without one (a sleep). */
export interface WaitKey {
  kind: WaitKind;
  role: WaitRole;
  name: string;
  /** The occurrence: the nth wait of this kind and name in one body invocation, from 1. */
  n: number;
}

/** The key of one wait entry. */
export function waitKey(k: WaitKey): string {
  return `${RESERVED_STEP_PREFIX}${k.kind}${k.role === "end" ? "" : `-${k.role}`}${k.name === "" ? "" : `:${k.name}`}#${k.n}`;
}

// A name is a step id (no `#`, see io/plan-paths.ts), so the last `#` starts the occurrence.
const KEY = new RegExp(`^${RESERVED_STEP_PREFIX.replace(/[.*+?^${}()|[\]\\]/gu, "\\$&")}(sleep|approval)(?:-(start|due))?(?::([^#]+))?#([1-9]\\d*)$`, "u");

/** `key` taken apart when it is a wait entry's; null for any other key (a body's step, another reserved key). */
export function parseWaitKey(key: string): WaitKey | null {
  const m = KEY.exec(key);
  if (m === null) return null;
  const [, kind, role, name, n] = m;
  return { kind: kind as WaitKind, role: (role ?? "end") as WaitRole, name: name ?? "", n: Number(n) };
}

/** The label people read for a wait: `sleep`, `approval:ship`. */
export function waitLabel(k: Pick<WaitKey, "kind" | "name">): string {
  return k.name === "" ? k.kind : `${k.kind}:${k.name}`;
}
