/**
 * What the inspector pushes instead of the page polling: a stream of `changed` events (server-sent events) for
 * one run, sent when any file of its folder or of its history changes. The server looks at names, sizes and
 * modification times only (a few stats every 250 ms, never the history's contents); the lock's heartbeat (its
 * folder's time) is not a change, its holder coming or going is.
 *
 * Sizes and times can miss a write. A segment is written in place into room it already holds (its size does not
 * move), and a file system stamps times from a clock tick (a few ms on Linux, up to 2 s on FAT): a second write
 * in the tick of the first leaves the file as the last look saw it. So a look that saw a time that recent is
 * not trusted: the next look says `changed` whatever it sees (git's "racily clean" index entries, the same rule).
 */
import { lstat, readdir } from "node:fs/promises";
import type http from "node:http";
import path from "node:path";
import { LOCK_DIR_NAME } from "../lock/holder.js";

/** How often the server looks; a change reaches the page within about this long. */
export const WATCH_INTERVAL_MS = 250;
const HEARTBEAT_MS = 15_000;
/** The coarsest tick a file system stamps times with (FAT's 2 s), and some slack for clocks that disagree. */
export const RACY_MS = 2_500;

/**
 * One look at a run: a signature that changes whenever anything a reader shows could have changed, and whether
 * it can be trusted to (`settled`: nothing in it was stamped within RACY_MS of the look; see the module comment).
 */
export interface RunLook {
  signature: string;
  settled: boolean;
}

/** The run folder's look: names, sizes and times, two levels down (`clock`: the wall clock's time, ms). */
export async function folderSignature(runDir: string, clock: () => number = Date.now): Promise<RunLook> {
  // Taken before the stats: a file stamped after it is as recent as can be, and counts as racy.
  const lookedAt = clock();
  let settled = true;
  const parts: string[] = [];
  const walk = async (dir: string, depth: number): Promise<void> => {
    const names = await readdir(dir).catch(() => null);
    if (names === null) return void parts.push(`${dir}:-`);
    for (const name of names.sort()) {
      const p = path.join(dir, name);
      const st = await lstat(p).catch(() => null);
      if (st === null) continue;
      const inLock = p.includes(`${path.sep}${LOCK_DIR_NAME}`);
      parts.push(inLock ? p : `${p}:${st.size}:${st.mtimeMs}`);
      // A time far ahead of the look's (a skewed or planted stamp) is no tick of this clock: trusting it keeps one
      // such file from making the page read the run again every look, for as long as it is open.
      if (!inLock && Math.abs(lookedAt - st.mtimeMs) < RACY_MS) settled = false;
      if (st.isDirectory() && depth < 1) await walk(p, depth + 1);
    }
  };
  await walk(runDir, 0);
  return { signature: parts.join("|"), settled };
}

/**
 * Streams `changed` events for `runDir` on `res` until the client goes; returns a stop for server shutdown
 * (`signature`: the folder's by default; a store named by URL has no folder and passes its own). The
 * first comment (`: watching`) is sent once the folder's first signature is taken: any change after the client
 * reads it is reported.
 */
export async function streamChanges(req: http.IncomingMessage, res: http.ServerResponse, runDir: string, signature: (runDir: string) => Promise<RunLook> = folderSignature): Promise<() => void> {
  let last = await signature(runDir);
  // A client gone while the signature was taken has fired its `close` already: no timers for it.
  if (req.socket.destroyed) return () => undefined;
  res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-store", connection: "keep-alive" });
  res.write(": watching\n\n");
  let busy = false;
  const look = async () => {
    if (busy) return;
    busy = true;
    try {
      const now = await signature(runDir).catch(() => last);
      if (now.signature !== last.signature || !last.settled) res.write(`event: changed\ndata: {}\n\n`);
      last = now;
    } finally {
      busy = false;
    }
  };
  const timer = setInterval(() => void look(), WATCH_INTERVAL_MS);
  const beat = setInterval(() => res.write(": ping\n\n"), HEARTBEAT_MS);
  const stop = () => {
    clearInterval(timer);
    clearInterval(beat);
    res.end();
  };
  req.on("close", stop);
  return stop;
}
