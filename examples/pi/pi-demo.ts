/**
 * The pi part of `pnpm demo`: the dev-dependency pi (0.73.1) runs the example workflow against the scripted
 * model on 127.0.0.1, offline, with the built extension file; prints what the agent saw before each model call,
 * the status bar, and the completion message. See ship-scenario.ts for the script.
 */
import { spawnSync } from "node:child_process";
import * as path from "node:path";
import { devHost } from "./pi-process.js";
import { contentText, type SeenRequest } from "./scripted-model.js";
import { runShipScenario } from "./ship-scenario.js";

const ROOT = path.resolve(import.meta.dirname, "..", "..");

/** What runs the build: one synchronous child process (injected by the test that checks the notice comes first). */
export type BuildRunner = (command: string, args: string[], cwd: string) => { status: number | null; stdout: string; stderr: string };

const spawnBuild: BuildRunner = (command, args, cwd) => spawnSync(command, args, { cwd, encoding: "utf8" });

/**
 * Builds the packages for pi (it loads the built extension file). Says so first: on a fresh clone `tsc -b` takes
 * about 20 s with nothing else on the screen, and later runs are incremental (a second or two).
 */
export function buildForPi(say: (line: string) => void, run: BuildRunner = spawnBuild): void {
  say("   building the packages first (tsc -b: pi loads the built extension file; ~20 s on a fresh clone, a few seconds after)…");
  const started = Date.now();
  const tsc = path.join(ROOT, "node_modules", "typescript", "bin", "tsc");
  const built = run(process.execPath, [tsc, "-b"], ROOT);
  if (built.status !== 0) throw new Error(`tsc -b failed:\n${built.stdout}${built.stderr}`);
  say(`   built in ${((Date.now() - started) / 1000).toFixed(1)} s; starting pi`);
}

/** Builds the packages (pi loads the built extension file), then runs and prints the scenario. */
export async function runPiDemo(say: (line: string) => void = console.log): Promise<void> {
  buildForPi(say);
  const extension = path.join(ROOT, "packages", "adapters-pi", "dist", "pi", "default-extension.js");
  const host = devHost();
  const r = await runShipScenario({ host, extension, log: (l) => say(`   $ ${l}`) });
  say("");
  say("   What the agent saw before each model call (new messages only):");
  let before = 0;
  r.requests.forEach((req, i) => {
    if (i === r.firstRequestAfterResume) {
      say("   ── pi was killed here and continued with -c ──");
      before = 0;
    }
    const fresh = i === r.firstRequestAfterResume ? req.messages.filter((m) => m.role !== "system").slice(-2) : req.messages.slice(before);
    before = req.messages.length;
    say(`   call ${i + 1}:`);
    for (const m of fresh) if (m.role !== "system" && m.role !== "assistant") say(`     ${m.role.padEnd(9)} ${summarize(m)}`);
  });
  say("");
  const statuses = r.statuses.flat().filter((s, i, all): s is string => s !== undefined && s !== all[i - 1]);
  say(`   Status bar: ${statuses.join("  →  ")}`);
  const done = r.session.filter((e) => e["type"] === "custom_message" && e["customType"] === "workflow:complete");
  say(`   Completion messages in the session: ${done.length} (after a second -c too)`);
  for (const m of done) say(String(m["content"]).replace(/^/gm, "     "));
}

function summarize(m: SeenRequest["messages"][number]): string {
  const text = contentText(m.content);
  const lines = text.split("\n").filter((l) => l.trim() !== "");
  if (text.startsWith("[Workflow path:")) return `(hidden context) ${lines[0]} … ${lines.find((l) => l.startsWith("Instructions:")) ? lines[lines.findIndex((l) => l.startsWith("Instructions:")) + 1] : ""}`;
  if (m.role === "tool" && text.includes("[Workflow path:")) return `${lines[0]}  + the new phase's context: ${lines.find((l) => l.startsWith("[Workflow path:"))}`;
  return lines.slice(0, 2).join(" ⏎ ").slice(0, 160);
}
