/**
 * Child of resume-due-store.int.test.ts: a run in the PostgreSQL store that sleeps (`sleep <ms>`) or waits for an
 * approval (`approval`). Prints `{"ev":"waiting"}` once the wait's start entry is in the history, so a SIGKILL
 * after it lands inside the wait.   argv: url namespace slug mode ms leaseMs
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { runWorkflow } from "@phasekit/adapters-pi";
import { openPostgresPlanStore } from "../../src/index.js";

const [url, namespace, slug, mode, ms, leaseMs] = process.argv.slice(2) as [string, string, string, string, string, string];
const out = (event: Record<string, unknown>): void => void process.stdout.write(`${JSON.stringify(event)}\n`);
const store = await openPostgresPlanStore({ connectionString: url, namespace, leaseMs: Number(leaseMs) });
const startKey = mode === "approval" ? "phasekit:approval-start:ship#1" : "phasekit:sleep-start#1";
const repoRoot = mkdtempSync(path.join(tmpdir(), "phasekit-pg-waiter-"));
// The run's clock is an hour behind: a sleep's recorded due time (start + ms) has passed for everyone else while
// the sleep itself still lasts its whole length here, so a SIGKILL lands inside it however slow the machine is.
const clock = (): Date => new Date(Date.now() - 3_600_000);
await runWorkflow({ repoRoot, target: slug, toolName: "waiter", store, waitPollMs: 20, clock }, async (ctx) => {
  void (async () => {
    while ((await ctx.checkpoints.record(startKey)) === undefined) await new Promise((r) => setTimeout(r, 10));
    out({ ev: "waiting" });
  })();
  if (mode === "approval") await ctx.waitForApproval("ship", { prompt: "Ship it?" });
  else await ctx.sleep(Number(ms));
  return "woke";
});
out({ ev: "end" });
await store.close();
