import { describe, it, expect } from "vitest";
import { createHash } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { openRunLog } from "../src/store/run-log/run-log.js";
import { spawnLines } from "./helpers/spawn-child.js";

const CRASHER = fileURLToPath(new URL("./helpers/runlog-crasher.mjs", import.meta.url));
const STEPS = 10;
const digest = (v: unknown): string => createHash("sha256").update(JSON.stringify(v)).digest("hex").slice(0, 16);
const outputOf = (i: number): unknown => ({ i, pad: (i % 3 === 0 ? "A" : "b").repeat(i % 3 === 0 ? 300 : 20) });

async function runChild(runDir: string, killAt: number): Promise<{ acked: Map<string, string>; boundaries?: number; names?: string[]; signal: string | null }> {
  const child = spawnLines(process.execPath, [CRASHER, runDir, String(killAt), String(STEPS)]);
  const { signal } = await child.exited;
  const acked = new Map<string, string>();
  let boundaries: number | undefined;
  let names: string[] | undefined;
  for (const line of child.lines) {
    const [kind, a, b] = line.split(" ");
    if (kind === "ok") acked.set(a as string, b as string);
    if (kind === "boundaries") boundaries = Number(a);
    if (kind === "names") names = JSON.parse(line.slice("names ".length)) as string[];
  }
  return { acked, signal, ...(boundaries === undefined ? {} : { boundaries }), ...(names === undefined ? {} : { names }) };
}

describe("run log crash sweep: SIGKILL before every file-system call", () => {
  it("every acknowledged step survives with its output, the log always opens, and a resume completes", async () => {
    const clean = await runChild(mkdtempSync(path.join(tmpdir(), "phasekit-crash-")), 0);
    const total = clean.boundaries as number;
    expect(total).toBeGreaterThan(30);
    // The sweep kills before a record's write, the zero-filled room after it, the sync, the fence, the snapshot,
    // and the cut of the unused room at close (segment-file.ts).
    for (const name of ["write", "write(room)", "fdatasync", "readdir(fence)", "write(snapshot)", "ftruncate(room)"]) expect(clean.names).toContain(name);
    for (let k = 1; k <= total; k++) {
      const runDir = mkdtempSync(path.join(tmpdir(), "phasekit-crash-"));
      const first = await runChild(runDir, k);
      expect(first.signal, `kill at ${k}`).toBe("SIGKILL");
      // Resume in this process: acknowledged steps are reused with the acknowledged output, never rerun.
      const log = await openRunLog({ runDir, inlineMax: 200 });
      for (let i = 0; i < STEPS; i++) {
        const key = `s${i}`;
        const r = await log.step(key, { j: i }, () => outputOf(i) as never);
        if (first.acked.has(key)) {
          expect(r.reused, `kill at ${k}: ${key} was acknowledged`).toBe(true);
          expect(digest(r.output), `kill at ${k}: ${key}`).toBe(first.acked.get(key));
        }
        expect(r.output).toEqual(outputOf(i));
      }
      await log.close();
      const again = await openRunLog({ runDir, inlineMax: 200 });
      expect(again.entries().filter((e) => e.status === "completed")).toHaveLength(STEPS);
      await again.close();
    }
  }, 180_000);
});
