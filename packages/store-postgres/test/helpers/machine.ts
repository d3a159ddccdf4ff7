/**
 * A "machine" for the multi-process tests: its own process, connection pool and plan folder, running the same
 * workflow (slug) against the shared database. Prints one JSON line per event on stdout.
 *   argv: url namespace slug steps stepMs leaseMs mode   (mode: "workflow" = through runWorkflow, re-entering a
 *   finished run so every machine gets in and reuses its steps; "raw" = the
 *   store directly, step bodies deaf to the abort signal so a late write reaches the database)
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { runWorkflow } from "@phasekit/adapters-pi";
import { openPostgresPlanStore } from "../../src/index.js";

const [url, namespace, slug, stepsArg, stepMsArg, leaseArg, mode] = process.argv.slice(2) as [string, string, string, string, string, string, string];
const steps = Number(stepsArg);
const stepMs = Number(stepMsArg);
const leaseMs = Number(leaseArg);
const out = (event: Record<string, unknown>): void => void process.stdout.write(`${JSON.stringify({ pid: process.pid, t: Date.now(), ...event })}\n`);

const store = await openPostgresPlanStore({ connectionString: url, namespace, leaseMs });
const body = async (i: number, signal?: AbortSignal): Promise<{ i: number; by: number }> => {
  out({ ev: "run", i });
  await sleep(stepMs, undefined, signal ? { signal } : {});
  out({ ev: "ran", i });
  return { i, by: process.pid };
};
try {
  if (mode === "raw") {
    const got = await store.lock(slug, { owner: { tool: "machine" }, retries: 1_000 });
    if (!got.ok) throw got.error;
    out({ ev: "locked" });
    const cps = await store.checkpoints(slug, { now: () => new Date() });
    for (let i = 0; i < steps; i++) {
      const r = await cps.step(`s${i}`, { i }, () => body(i));
      out({ ev: "done", i, reused: r.reused });
    }
    await got.lock.release();
    out({ ev: "end", status: "completed" });
  } else {
    const repoRoot = mkdtempSync(path.join(tmpdir(), "phasekit-machine-"));
    const r = await runWorkflow({ repoRoot, toolName: "machine", target: slug, store, reenter: true, lock: { staleMs: leaseMs, retries: 1_000 } }, async (ctx) => {
      out({ ev: "locked" });
      for (let i = 0; i < steps; i++) {
        await ctx.step(`s${i}`, { i }, (signal) => body(i, signal));
        out({ ev: "done", i });
      }
      return "ok";
    });
    out({ ev: "end", status: r.status });
  }
} catch (error) {
  const e = error as { code?: string; message?: string; details?: Record<string, unknown> };
  out({ ev: "error", code: e.code ?? "UNKNOWN", message: e.message, connectionLost: e.details?.connectionLost === true, epoch: e.details?.field === "epoch" ? e.details.value : undefined });
} finally {
  await store.close();
}
