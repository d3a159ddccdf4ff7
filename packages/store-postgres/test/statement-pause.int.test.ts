/**
 * The displaced-holder sweep on PostgreSQL: a holder stops itself (SIGSTOP) before each statement of its life
 * (statement-crasher.mjs), its lease runs out and another holder takes the run and completes it; then the first
 * is continued. From then on it must change nothing (every table of the namespace as the second holder left
 * it), acknowledge nothing new (no step it ran, no metadata generation), and end with a typed error (or, stopped
 * before its release, let go of a lease it no longer holds).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { untilStopped } from "../../adapters-pi/test/helpers/spawn-child.js";
import { startCluster } from "./helpers/cluster.js";
import { storeSetup } from "./helpers/stores.js";

const CRASHER = fileURLToPath(new URL("./helpers/statement-crasher.mjs", import.meta.url));
const LEASE_MS = 30_000;
const started = startCluster();

interface Child {
  proc: ChildProcess;
  lines: string[];
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resolves with the first line that satisfies `pred` (or undefined if the child exits first). */
  line(pred: (l: string) => boolean): Promise<string | undefined>;
}

function start(url: string, namespace: string, stopAt: number): Child {
  const proc = spawn(process.execPath, [CRASHER, url, namespace, String(stopAt), stopAt > 0 ? "stop" : "before", String(LEASE_MS)], { stdio: ["ignore", "pipe", "pipe"] });
  const lines: string[] = [];
  const waiters = new Set<() => void>();
  let buf = "";
  let err = "";
  let done = false;
  proc.stderr?.on("data", (d: Buffer) => (err += d.toString()));
  proc.stdout?.on("data", (d: Buffer) => {
    buf += d.toString();
    for (let nl = buf.indexOf("\n"); nl >= 0; nl = buf.indexOf("\n")) {
      lines.push(buf.slice(0, nl));
      buf = buf.slice(nl + 1);
    }
    for (const w of waiters) w();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    proc.on("close", (code, signal) => {
      done = true;
      for (const w of waiters) w();
      resolve({ code, signal });
    }),
  );
  const line = (pred: (l: string) => boolean): Promise<string | undefined> =>
    new Promise((resolve) => {
      const check = (): void => {
        const hit = lines.find(pred);
        if (hit !== undefined || done) {
          waiters.delete(check);
          resolve(hit);
        }
      };
      waiters.add(check);
      check();
    });
  return { proc, lines, stderr: () => err, exited, line };
}

if (!started.ok) {
  describe.skip(`postgres displaced-holder sweep (SKIPPED: ${started.reason})`, () => it("needs PostgreSQL", () => undefined));
} else {
  const { cluster } = started;
  const { admin, expire } = storeSetup(cluster);
  const tables = ["phasekit_runs", "phasekit_steps", "phasekit_artifacts", "phasekit_commits", "phasekit_journal", "phasekit_control"];
  const snapshot = async (namespace: string): Promise<unknown[]> =>
    Promise.all(tables.map(async (t) => (await admin.query(`SELECT to_jsonb(x) - 'lease_until' AS row FROM ${t} x WHERE namespace = $1 ORDER BY 1`, [namespace])).rows));

  describe("postgres displaced-holder sweep: SIGSTOP before every statement of a holder's life", () => {
    it("a holder continued after another completed the run changes nothing, acknowledges nothing new and stops", async () => {
      const clean = start(cluster.url, `clean-${randomUUID()}`, 0);
      expect((await clean.exited).code, clean.stderr()).toBe(0);
      const total = Number((await clean.line((l) => l.startsWith("statements ")))?.split(" ")[1]);
      expect(total).toBeGreaterThan(15);
      // Stopped before its lease was taken, a process is no holder yet: it may take the run later, rightly.
      const lockedAt = Number((await clean.line((l) => l.startsWith("locked ")))?.split(" ")[1]);
      const failures: string[] = [];
      const one = async (k: number): Promise<void> => {
        const namespace = `pause-${k}-${randomUUID()}`;
        const first = start(cluster.url, namespace, k);
        if ((await first.line((l) => l.startsWith("stopping "))) === undefined) {
          failures.push(`${k}: never stopped (${JSON.stringify(await first.exited)}): ${first.stderr().slice(0, 300)}`);
          return;
        }
        // Its line comes before its SIGSTOP lands: a SIGCONT sent in between would be lost.
        await untilStopped(first.proc.pid as number);
        // The first holder stands still; its lease runs out (by hand: no waiting) and another takes the run.
        await expire(namespace);
        const second = start(cluster.url, namespace, 0);
        const end = await second.exited;
        if (end.code !== 0) {
          first.proc.kill("SIGKILL");
          failures.push(`${k}: the second holder failed (${JSON.stringify(end)}): ${second.stderr().slice(0, 300)}`);
          return;
        }
        const before = await snapshot(namespace);
        const seenBefore = first.lines.length;
        first.proc.kill("SIGCONT");
        const { code } = await first.exited;
        const after = await snapshot(namespace);
        const late = first.lines.slice(seenBefore).filter((l) => l.startsWith("gen ") || (l.startsWith("ok ") && !l.endsWith(" true")));
        if (JSON.stringify(after) !== JSON.stringify(before)) failures.push(`${k}: the continued holder changed the database`);
        if (late.length > 0) failures.push(`${k}: the continued holder acknowledged ${JSON.stringify(late)}`);
        // LOCK_LOST; or, stopped inside its compaction's transaction (the server ended that idle session so the
        // run could be taken), the typed error of its cut connection; or, stopped before its release, nothing to do.
        const typed = /LOCK_LOST|WRITE_FAILED/.test(first.stderr());
        if (!((code !== 0 && typed) || (code === 0 && k === total))) failures.push(`${k}: the continued holder ended with exit ${code} and ${first.stderr().slice(0, 300) || "no error"}`);
      };
      const cases = Array.from({ length: total - lockedAt }, (_, i) => lockedAt + i + 1);
      await Promise.all(
        Array.from({ length: 4 }, async () => {
          for (let k = cases.shift(); k !== undefined; k = cases.shift()) await one(k);
        }),
      );
      expect(failures).toEqual([]);
    }, 240_000);
  });
}
