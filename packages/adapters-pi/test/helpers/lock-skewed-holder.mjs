// Child of plan-lock.identity.int.test.ts: a holder whose wall clock runs SKEW_MS behind (every `new Date()` and
// `Date.now()` in this process, so its lock refreshes carry old mtimes), alive and refreshing. Prints `held`.
const SKEW_MS = Number(process.argv[3] ?? "30000");
const RealDate = Date;
class SkewedDate extends RealDate {
  constructor(...args) {
    if (args.length === 0) super(RealDate.now() - SKEW_MS);
    else super(...args);
  }
  static now() {
    return RealDate.now() - SKEW_MS;
  }
}
globalThis.Date = SkewedDate;
const { acquirePlanLock } = await import("../../dist/lock/plan-lock.js");
const r = await acquirePlanLock({ runDir: process.argv[2], owner: { tool: "skewed" }, staleMs: 2_000, updateMs: 1_000 });
if (!r.ok) throw r.error;
r.lock.signal.addEventListener("abort", () => process.stdout.write("lost\n"));
process.stdout.write("held\n");
setInterval(() => undefined, 1_000);
