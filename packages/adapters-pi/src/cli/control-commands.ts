/** `pause`, `stop`, `resume`, `cancel` (control-actions.ts does them) and `inspect`. */
import type { Command } from "commander";
import { analyzeResumeTarget } from "../run/resume-analysis.js";
import { common } from "./context.js";
import { controlRun, type ControlAction } from "./control-actions.js";
import { EXIT, JSON_SCHEMAS, printJson, type CliIo } from "./io.js";
import { notOnStore } from "./store-runs.js";

export { CLI_TOOL } from "./control-actions.js";

const DESCRIPTIONS: Record<ControlAction, string> = {
  pause: "ask a running run to pause at its next step (resumable)",
  stop: "ask a running run to stop at its next step (it ends cancelled)",
  resume: "withdraw a pending pause request; for a paused run, say how its owner continues it",
  cancel: "end a run as cancelled: a live run is asked to stop; a paused or crashed one is cancelled at once under its lock",
};

/** Registers the control commands. */
export function registerControlCommands(program: Command, io: CliIo, setExit: (code: number) => void): void {
  for (const action of ["pause", "stop", "resume"] as const) {
    const cmd = program.command(action).description(DESCRIPTIONS[action]).argument("<run>", "run id, slug or path");
    if (action !== "resume") cmd.argument("[reason...]", "why, recorded with the request");
    cmd.action(async (target: string, ...rest: unknown[]) => {
      const words = action === "resume" ? [] : (rest[0] as string[]);
      await act(io, rest[rest.length - 1] as Command, target, action, words);
    });
  }

  program
    .command("inspect")
    .description("could tool T resume this run? (not-found / ambiguous / unreadable / owned-by-other / resumable; exit 0 only for resumable)")
    .argument("<run>", "run id, slug or path")
    .requiredOption("--tool <name>", "the tool that would resume it")
    .action(async (target: string, o: { tool: string }, cmd: Command) => {
      const c = common(cmd, io);
      if (c.roots.store !== undefined) notOnStore("inspect", "`phasekit show <run> --store …` shows the run's owner tool and status");
      const a = await analyzeResumeTarget({ ...c.roots, target, invokedTool: o.tool });
      io.stdout.write(`${JSON.stringify(a, null, 2)}\n`);
      if (a.kind !== "resumable") setExit(a.kind === "not-found" ? EXIT.notFound : EXIT.failed);
    });

  program
    .command("cancel")
    .description(DESCRIPTIONS.cancel)
    .argument("<run>", "run id, slug or path")
    .argument("[reason...]", "why, recorded as the failure reason")
    .action(async (target: string, words: string[], _o: unknown, cmd: Command) => act(io, cmd, target, "cancel", words));
}

async function act(io: CliIo, cmd: Command, target: string, action: ControlAction, words: string[]): Promise<void> {
  const c = common(cmd, io);
  const outcome = await controlRun(c.roots, target, action, words.length > 0 ? words.join(" ") : undefined, io.now());
  if (c.json) printJson(io, JSON_SCHEMAS.control, outcome.body);
  else io.stdout.write(`${outcome.text}\n`);
}
