/** Hostile things to plant in place of a file of a run folder: a symlink out of the plan root, a FIFO, a huge sparse file. */
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import path from "node:path";

/** What can be planted. */
export type Hostile = "symlink" | "fifo" | "huge";

/** Plants `kind` at `file`; for a symlink, returns the foreign file it points to (with known content). */
export function plant(kind: Hostile, file: string, outside: string, hugeBytes = 600 * 1024 * 1024): { foreign?: string } {
  mkdirSync(path.dirname(file), { recursive: true });
  if (kind === "symlink") {
    const foreign = path.join(outside, `foreign-${path.basename(file)}`);
    writeFileSync(foreign, "FOREIGN CONTENT\n");
    symlinkSync(foreign, file);
    return { foreign };
  }
  if (kind === "fifo") {
    execFileSync("mkfifo", [file]);
    return {};
  }
  // A sparse file: 600 MB on paper, no disk used, created in microseconds.
  writeFileSync(file, "");
  truncateSync(file, hugeBytes);
  return {};
}

/** True when the foreign file still holds exactly what `plant` wrote. */
export function foreignIntact(foreign: string): boolean {
  return readFileSync(foreign, "utf8") === "FOREIGN CONTENT\n";
}
