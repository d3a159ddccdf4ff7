// Child of run-workflow.waits.int.test.ts: a run in <repoRoot>/ai_plan/<slug> that spends budget, waits for an
// approval (mode `approval`; `approval-form`: a schema with every field kind the inspector's form knows) or sleeps
// (mode `sleep <ms>`), then finishes. It prints `waiting` once the wait's start
// entry is in the history (so a SIGKILL after it lands inside the wait), and `end` with how the run ended.
import { runWorkflow } from "../../dist/index.js";

const [repoRoot, slug, mode, arg, turnsLimit] = process.argv.slice(2);
const FORM_SCHEMA = {
  type: "object",
  properties: { channel: { enum: ["beta", "stable"] }, replicas: { type: "integer", minimum: 1 }, ratio: { type: "number" }, notify: { type: "boolean" }, note: { type: "string" } },
  required: ["channel", "replicas"],
  additionalProperties: false,
};
const say = (obj) => process.stdout.write(`${JSON.stringify(obj)}\n`);
const approval = mode === "approval" || mode === "approval-form";
const startKey = approval ? "phasekit:approval-start:ship#1" : "phasekit:sleep-start#1";

try {
  const run = await runWorkflow(
    { repoRoot, target: slug, toolName: "waiter-test", lock: { staleMs: 2_000 }, waitPollMs: 20, ...(turnsLimit ? { budgets: { turns: Number(turnsLimit) } } : {}) },
    async (ctx) => {
      await ctx.budget.spend({ turns: 1, tokens: 100 });
      say({ event: "spent", used: ctx.budget.used().turns, pid: process.pid });
      const announce = (async () => {
        let record;
        // The entry is in the history once its record is completed (a `started` record is only the attempt).
        while ((record = await ctx.checkpoints.record(startKey))?.status !== "completed") await new Promise((r) => setTimeout(r, 10));
        say({ event: "waiting", start: record });
      })();
      let outcome = null;
      if (approval) {
        const timeoutMs = arg ? Number(arg) : undefined;
        const schema = mode === "approval-form" ? FORM_SCHEMA : { type: "object", properties: { channel: { enum: ["beta", "stable"] } }, required: ["channel"] };
        outcome = await ctx.waitForApproval("ship", { prompt: "Ship it?", schema, ...(timeoutMs ? { timeoutMs } : {}) });
      } else {
        await ctx.sleep(Number(arg));
        outcome = { slept: true };
      }
      await announce;
      await ctx.budget.spend({ turns: 1 });
      return { outcome, used: ctx.budget.used().turns, tokens: ctx.budget.used().tokens };
    },
  );
  say({ event: "end", status: run.status, result: run.result ?? null, reason: run.reason ?? null });
} catch (error) {
  say({ event: "rejected", code: error?.code, message: String(error?.message) });
}
process.exit(0);
