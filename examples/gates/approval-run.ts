/**
 * Gates in code (docs/gates.md): a release run that spends from a budget, waits durably for a person to choose
 * the release channel (`phasekit approve <run> --name ship --data '{"channel":"beta"}'` from any shell), then
 * sleeps durably before publishing. Kill it anywhere and run it again: it continues where it was. A test imports it.
 */
import { runWorkflow, type RunResult } from "@phasekit/adapters-pi";

/** What the release needs a person to hand it. */
export const SHIP_SCHEMA = {
  type: "object",
  properties: { channel: { enum: ["beta", "stable"] } },
  required: ["channel"],
} as const;

/** The run's result: shipped to a channel, or why not. */
export type ShipResult = { shipped: true; channel: string; artifact: string; turnsLeft: number | undefined } | { shipped: false; why: string };

/** Runs (or resumes) the release `slug` in `repoRoot`. */
export function shipWithApproval(repoRoot: string, slug: string, options: { timeoutMs?: number; pollMs?: number } = {}): Promise<RunResult<ShipResult>> {
  return runWorkflow({ repoRoot, target: slug, toolName: "release-bot", budgets: { turns: 20, cost: 1, onExhausted: "pause" }, waitPollMs: options.pollMs ?? 500 }, async (ctx) => {
    const artifact = await ctx.step("build", {}, async () => `artifact-${slug}`);
    // An agent call inside the step would report what it spent; the spend is a history entry (kept on resume).
    await ctx.budget.spend({ turns: 1, tokens: 1_200, cost: 0.01 });
    const decision = await ctx.waitForApproval("ship", { prompt: "Ship it? Choose the release channel.", schema: SHIP_SCHEMA, timeoutMs: options.timeoutMs ?? 24 * 3_600_000 });
    if (decision.status === "timed-out") return { shipped: false, why: `nobody answered within ${decision.waitedMs} ms` };
    if (decision.status === "rejected") return { shipped: false, why: decision.reason };
    const { channel } = decision.data as { channel: string };
    await ctx.sleep(50); // e.g. give a CDN time before announcing; a resumed run sleeps only what is left
    await ctx.step("publish", { channel }, async () => `${artifact} → ${channel}`);
    return { shipped: true, channel, artifact, turnsLeft: ctx.budget.left().turns };
  });
}
