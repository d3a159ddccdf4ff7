/**
 * Where a pid means something: this process's host, boot and pid namespace, and the one rule that judges a
 * recorded pid dead or alive from them (the lock's holder records and the leftovers named by their writer's pid,
 * temp files and fork folders, alike). Below lock/ so the atomic write's cleanup can use it too.
 */
import os from "node:os";
import { createHash } from "node:crypto";
import { readFileSync, readlinkSync } from "node:fs";
import { fsErrorCode } from "./fs-port.js";

/** Where this process runs, as far as pids are concerned: boot id and pid namespace (absent off Linux). */
export interface ProcessIdentity {
  bootId?: string;
  pidNs?: string;
}

let identity: ProcessIdentity | undefined;

/** This process's boot id and pid namespace, read once. */
export function processIdentity(): ProcessIdentity {
  if (identity !== undefined) return identity;
  const out: ProcessIdentity = {};
  try {
    out.bootId = readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
  } catch {
    // Not Linux: no boot id, so no holder is ever judged dead by pid (the stale time decides).
  }
  try {
    out.pidNs = readlinkSync("/proc/self/ns/pid");
  } catch {
    // Likewise.
  }
  identity = out;
  return out;
}

/** What `judgePid` needs of a holder record. */
export interface PidRecord {
  pid: number;
  host: string;
  bootId?: string | undefined;
  pidNs?: string | undefined;
}

/**
 * The holder's process as this host sees it: `dead` when it provably ran on this host, this boot and this pid
 * namespace and its pid no longer exists (ESRCH); `alive` when it ran there and its pid exists; otherwise
 * `unknown` (another host, a container's pid namespace, before a reboot, or a record without those facts). A pid
 * reused by another process reads as alive; the only cost is that the heartbeat decides, after a watch.
 */
export function judgePid(holder: PidRecord): "alive" | "dead" | "unknown" {
  if (holder.host !== os.hostname() || holder.pid <= 0) return "unknown";
  const here = processIdentity();
  if (here.bootId === undefined || here.pidNs === undefined || holder.bootId !== here.bootId || holder.pidNs !== here.pidNs) return "unknown";
  if (holder.pid === process.pid) return "alive";
  try {
    process.kill(holder.pid, 0);
    return "alive";
  } catch (error) {
    return fsErrorCode(error) === "ESRCH" ? "dead" : "alive";
  }
}


const NO_SPACE = "00000000";
let spaceTag: string | undefined;

/**
 * A short tag (8 hex) of where this process's pid means something: host, boot and pid namespace, the facts
 * `judgePid` compares. A leftover named by its writer's pid also carries this tag, so a name alone can be judged by
 * the same rule as a holder record; "00000000" off Linux (no boot id or namespace), where no pid is judged dead.
 */
export function pidSpaceTag(): string {
  if (spaceTag !== undefined) return spaceTag;
  const here = processIdentity();
  spaceTag = here.bootId === undefined || here.pidNs === undefined ? NO_SPACE : createHash("sha256").update(`${os.hostname()}\0${here.bootId}\0${here.pidNs}`).digest("hex").slice(0, 8);
  return spaceTag;
}

/** `judgePid` for a leftover that records only its writer's pid and `pidSpaceTag()`: another space is `unknown`. */
export function judgeTaggedPid(pid: number, tag: string): "alive" | "dead" | "unknown" {
  if (tag === NO_SPACE || tag !== pidSpaceTag()) return "unknown";
  const here = processIdentity();
  return judgePid({ pid, host: os.hostname(), bootId: here.bootId, pidNs: here.pidNs });
}
