/**
 * Hostile folders DURING a live run: while a runWorkflow body waits on a promise the test holds, the history
 * folder (runlog/) or the live segment is replaced by a symlink (to another run's history, or out of the plan
 * root), a FIFO, a regular file or a huge sparse file. The body's next step is a typed error naming the path,
 * nothing is acknowledged into a file no reader will find, and nothing outside the run is touched.
 */
import { describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, renameSync, statSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import path from "node:path";
import { isWorkflowError } from "@phasekit/core";
import { runWorkflow } from "@phasekit/adapters-pi";
import { useTempRepos } from "../helpers/temp-repos.js";

const repo = useTempRepos("pk-hostile-live-");

type Planted = "symlink-out" | "symlink-other-run" | "fifo" | "file" | "huge";
const KINDS: Planted[] = ["symlink-out", "symlink-other-run", "fifo", "file", "huge"];

/** Snapshot of a folder's names, sizes and contents (small files), to prove it untouched. */
function picture(dir: string): string {
  return readdirSync(dir)
    .sort()
    .map((n) => {
      const st = statSync(path.join(dir, n));
      return `${n}:${st.size}:${st.isFile() && st.size < 1_000_000 ? readFileSync(path.join(dir, n), "base64") : ""}`;
    })
    .join("\n");
}

function plant(kind: Planted, at: string, outside: string, otherRunlog: string): void {
  if (kind === "symlink-out") symlinkSync(outside, at);
  else if (kind === "symlink-other-run") symlinkSync(otherRunlog, at);
  else if (kind === "fifo") execFileSync("mkfifo", [at]);
  else {
    writeFileSync(at, kind === "file" ? '{"t":"head","v":1,"e":1,"base":null,"pins":[]}\n' : "");
    if (kind === "huge") truncateSync(at, 600 * 1024 * 1024);
  }
}

describe("hostile folders during a live run", () => {
  for (const target of ["runlog", "segment"] as const) {
    for (const kind of KINDS) {
      it(`${target} replaced by ${kind} while the body waits: typed error naming it, nothing outside touched`, async () => {
        const root = repo();
        const outside = path.join(root, "outside");
        mkdirSync(outside);
        writeFileSync(path.join(outside, "0000000001.seg"), "FOREIGN\n");
        await runWorkflow({ repoRoot: root, target: "other", toolName: "t" }, async (ctx) => ctx.step("x", {}, () => "x"));
        const otherRunlog = path.join(root, "ai_plan", "other", "runlog");
        const before = { outside: picture(outside), other: picture(otherRunlog) };

        let release!: () => void;
        const gate = new Promise<void>((r) => (release = r));
        let reached!: (runDir: string) => void;
        const paused = new Promise<string>((r) => (reached = r));
        let secondRan = false;
        const run = runWorkflow({ repoRoot: root, target: "live", toolName: "t" }, async (ctx) => {
          await ctx.step("a", { n: 1 }, () => "A");
          reached(ctx.runDir);
          await gate;
          return ctx.step("b", { n: 2 }, () => ((secondRan = true), "B"));
        }).then(
          (value) => ({ ok: true as const, value }),
          (error: unknown) => ({ ok: false as const, error }),
        );
        const runDir = await paused;
        const runlog = path.join(runDir, "runlog");
        const seg = path.join(runlog, readdirSync(runlog).filter((n) => n.endsWith(".seg")).sort().pop() as string);
        const at = target === "runlog" ? runlog : seg;
        renameSync(at, `${at}.moved`);
        plant(kind, at, outside, otherRunlog);
        release();
        const r = await run;
        const error = r.ok ? undefined : r.error;
        expect(isWorkflowError(error), `expected a typed error, got ${r.ok ? JSON.stringify(r.value.status) : String(error)}`).toBe(true);
        const e = error as { code: string; message: string };
        expect(["UNSAFE_FILE", "LOCK_LOST", "FILE_TOO_LARGE"]).toContain(e.code);
        expect(e.message).toContain(runlog);
        // Whatever the body's step did, it was never acknowledged as done.
        expect(secondRan && r.ok).toBe(false);
        expect(picture(outside)).toBe(before.outside);
        expect(picture(otherRunlog)).toBe(before.other);
      });
    }
  }
});
