/** Spawns plain-node lock helpers with a writable stdin and collects their stdout lines. */
import { fileURLToPath } from "node:url";
import { expect } from "vitest";
import { spawnLines, type LineChild } from "./spawn-child.js";

/** A running helper (see `LineChild`). */
export type LockChild = LineChild;

/** Absolute path of a helper script in this folder. */
export function helperPath(name: string): string {
  return fileURLToPath(new URL(`./${name}`, import.meta.url));
}

/** Starts `node test/helpers/<name> ...args` with a writable stdin. */
export function spawnLockChild(name: string, args: string[]): LockChild {
  return spawnLines(process.execPath, [helperPath(name), ...args]);
}

/** Waits for a runner child's last report (`end` or `rejected`), closes its stdin, checks it exited 0, returns the report. */
export async function finishRun<R>(child: LockChild): Promise<R> {
  const end = JSON.parse(await child.next(/"event":"(end|rejected)"/, true)) as R;
  child.end();
  const exit = await child.exited;
  expect(exit, exit.stderr).toMatchObject({ code: 0, signal: null });
  return end;
}
