/**
 * Child of run-log-goals.bench.ts for peak RSS: `import` (load the package only), `run <dir> <steps> [bytes] [unlike]` (a
 * run of that many steps with outputs of about `bytes`, default 1 KB) or `load <dir>` (open that run and reuse its first step). Prints the peak
 * resident set size in bytes.
 */
import { openRunLog } from "@phasekit/adapters-pi/plan-folder";

const [mode, dir, stepsText, bytesText, variant] = process.argv.slice(2);
const pad = Number(bytesText ?? 1000);
// `unlike`: each output unlike the one before it (no delta pays, every output is stored whole).
const out = (i: number): Record<string, string> => ({ i: String(i), pad: variant === "unlike" ? `${i.toString(36)}.`.repeat(pad).slice(0, pad) : "r".repeat(pad) });

if (mode === "run") {
  const log = await openRunLog({ runDir: dir as string });
  for (let i = 0; i < Number(stepsText); i++) await log.step(`s${i}`, { i }, () => out(i));
  await log.close();
} else if (mode === "load") {
  const log = await openRunLog({ runDir: dir as string });
  const r = await log.step("s0", { i: 0 }, () => out(-1));
  if (!r.reused) throw new Error("the first step was not reused");
  await log.close();
} else if (mode !== "import") throw new Error(`unknown mode ${mode}`);
process.stdout.write(`${process.resourceUsage().maxRSS * 1024}\n`);
