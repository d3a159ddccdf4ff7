/**
 * The inspector's change stream (cli/run-watch.ts) against writes that leave a file's size and time as they were:
 * a segment written in place keeps its size, and a write in the same clock tick as the last keeps its time.
 */
import { EventEmitter } from "node:events";
import { mkdirSync, mkdtempSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import type http from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { folderSignature, streamChanges } from "../../src/cli/run-watch.js";

const dirs: string[] = [];
const stops: (() => void)[] = [];
afterEach(() => {
  for (const stop of stops.splice(0)) stop();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function runFolder(): string {
  const dir = mkdtempSync(path.join(tmpdir(), "pk-watch-"));
  dirs.push(dir);
  mkdirSync(path.join(dir, "runlog"));
  return dir;
}

/** A request and response pair that records what the stream writes; `next(text)` resolves once it was written. */
function fakeClient() {
  const req = Object.assign(new EventEmitter(), { socket: { destroyed: false } }) as unknown as http.IncomingMessage;
  let written = "";
  const waiters: { text: string; from: number; resolve: () => void }[] = [];
  const res = {
    writeHead: () => res,
    write(chunk: string) {
      written += chunk;
      for (const w of [...waiters]) if (written.indexOf(w.text, w.from) !== -1) waiters.splice(waiters.indexOf(w), 1), w.resolve();
      return true;
    },
    end: () => undefined,
  } as unknown as http.ServerResponse;
  const next = (text: string): Promise<void> => new Promise((resolve) => waiters.push({ text, from: written.length, resolve }));
  return { req, res, next, written: () => written };
}

describe("the inspector's change stream", () => {
  it("reports a write that kept the segment's size and time (in place, in the same clock tick)", async () => {
    const dir = runFolder();
    const segment = path.join(dir, "runlog", "0000000001.log");
    writeFileSync(segment, Buffer.alloc(4096));
    // A time a coarse clock gives (whole seconds), which utimes can set back exactly.
    const mtime = new Date(Math.floor(Date.now() / 1000) * 1000);
    utimesSync(segment, mtime, mtime);
    const client = fakeClient();
    // Looks taken a second after that stamp (a loaded machine's delay cannot make them look settled).
    stops.push(await streamChanges(client.req, client.res, dir, (d) => folderSignature(d, () => mtime.getTime() + 1000)));
    expect(client.written()).toContain(": watching");
    const changed = client.next("event: changed");
    // A record written into the room: same size; the time set back to the first write's, as a coarse tick leaves it.
    writeFileSync(segment, Buffer.concat([Buffer.from('{"t":"done"}\n'), Buffer.alloc(4096 - 13)]));
    utimesSync(segment, mtime, mtime);
    expect([statSync(segment).size, statSync(segment).mtimeMs]).toEqual([4096, mtime.getTime()]);
    await changed;
  });

  it("trusts a look only when nothing in it was stamped recently", async () => {
    const dir = runFolder();
    const segment = path.join(dir, "runlog", "0000000001.log");
    writeFileSync(segment, "x");
    const old = new Date(Date.now() - 3_600_000);
    for (const p of [segment, path.join(dir, "runlog")]) utimesSync(p, old, old);
    const quiet = await folderSignature(dir);
    expect(quiet.settled).toBe(true);
    // A stamp far in the future (a skewed clock, a planted file) is no recent tick: it does not keep looks unsettled.
    const ahead = new Date(Date.now() + 3_600_000);
    utimesSync(segment, ahead, ahead);
    expect((await folderSignature(dir)).settled).toBe(true);
    writeFileSync(path.join(dir, "workflow.json"), "{}");
    const fresh = await folderSignature(dir);
    expect(fresh.settled).toBe(false);
    expect(fresh.signature).not.toBe(quiet.signature);
    // Stamped just ahead of the look (a tick of a clock a little ahead): not trusted.
    expect((await folderSignature(dir, () => Date.now() - 1_000)).settled).toBe(false);
  });
});
