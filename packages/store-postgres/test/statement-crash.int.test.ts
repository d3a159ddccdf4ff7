/**
 * The crash sweep on PostgreSQL (the run log's, run-log.crash.int.test.ts, one statement at a time): a holder is
 * SIGKILLed before every statement its life sends (lock, metadata writes, a journal event, steps, a commit intent
 * and its mark, a compaction, release), and again after each has committed but before the store saw the reply.
 * Then another holder takes the run once the lease has run out and lives the same life: every step the dead one
 * saw acknowledged is reused with the output it saw, every metadata write it saw acknowledged is kept (the
 * generation only grows), and the second life completes.
 */
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { startCluster } from "./helpers/cluster.js";
import { storeSetup } from "./helpers/stores.js";

const CRASHER = fileURLToPath(new URL("./helpers/statement-crasher.mjs", import.meta.url));
// Long enough that no life loses its lease to a loaded machine; a dead holder's lease is run out by hand.
const LEASE_MS = 30_000;
const started = startCluster();

interface Life {
  acked: Map<string, { digest: string; reused: boolean }>;
  generations: number[];
  statements?: number;
  signal: NodeJS.Signals | null;
  code: number | null;
  stderr: string;
}

function live(url: string, namespace: string, killAt: number, mode: "before" | "after"): Promise<Life> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CRASHER, url, namespace, String(killAt), mode, String(LEASE_MS)], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("exit", (code, signal) => {
      const life: Life = { acked: new Map(), generations: [], signal, code, stderr };
      for (const line of out.split("\n")) {
        const [kind, a, b, c] = line.split(" ");
        if (kind === "ok") life.acked.set(a as string, { digest: b as string, reused: c === "true" });
        if (kind === "gen") life.generations.push(Number(a));
        if (kind === "statements") life.statements = Number(a);
      }
      resolve(life);
    });
  });
}

if (!started.ok) {
  describe.skip(`postgres crash sweep (SKIPPED: ${started.reason})`, () => it("needs PostgreSQL", () => undefined));
} else {
  const { cluster } = started;
  const { expire } = storeSetup(cluster);

  describe("postgres crash sweep: SIGKILL before and after every statement of a holder's life", () => {
    it("acknowledged steps are reused with their output, acknowledged generations kept, and the next holder completes", async () => {
      const clean = await live(cluster.url, `clean-${randomUUID()}`, 0, "before");
      expect(clean.code, clean.stderr).toBe(0);
      const total = clean.statements as number;
      expect(total).toBeGreaterThan(15);
      const failures: string[] = [];
      const one = async (mode: "before" | "after", k: number): Promise<void> => {
        const namespace = `crash-${mode}-${k}-${randomUUID()}`;
        const first = await live(cluster.url, namespace, k, mode);
        if (first.signal !== "SIGKILL") {
          failures.push(`${mode} ${k}: the first life was not killed (exit ${first.code}): ${first.stderr.slice(0, 300)}`);
          return;
        }
        // What the lease's running out would do, without the wait.
        await expire(namespace);
        const second = await live(cluster.url, namespace, 0, "before");
        if (second.code !== 0) {
          failures.push(`${mode} ${k}: the second life failed (exit ${second.code}): ${second.stderr.slice(0, 300)}`);
          return;
        }
        for (const [key, seen] of first.acked) {
          const again = second.acked.get(key);
          if (again?.reused !== true || again.digest !== seen.digest) failures.push(`${mode} ${k}: ${key} was acknowledged, then ${JSON.stringify(again)}`);
        }
        const lastSeen = first.generations.at(-1) ?? 0;
        if ((second.generations[0] ?? 0) <= lastSeen) failures.push(`${mode} ${k}: generation ${lastSeen} was acknowledged, the next holder wrote ${second.generations[0]}`);
      };
      // Each kill point has its own run (namespace); four at a time: most of a case is waiting for a lease to run out.
      const cases = (["before", "after"] as const).flatMap((mode) => Array.from({ length: total }, (_, i) => [mode, i + 1] as const));
      const workers = Array.from({ length: 4 }, async () => {
        for (let c = cases.shift(); c !== undefined; c = cases.shift()) await one(c[0], c[1]);
      });
      await Promise.all(workers);
      expect(failures).toEqual([]);
    }, 240_000);
  });
}
