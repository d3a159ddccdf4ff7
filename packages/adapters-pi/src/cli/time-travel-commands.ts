/** `fork <run> --at <step>` and `rerun <run> --from <step>` (time-travel.ts does them). */
import type { Command } from "commander";
import { common } from "./context.js";
import { printJson, type CliIo } from "./io.js";
import { forkAt, rerunAt, type TimeTravelOutcome } from "./time-travel.js";

/** The JSON document tag of both commands' `--json`. */
export const TIME_TRAVEL_SCHEMA = "phasekit.time-travel/1";

/** Registers `fork` and `rerun`. */
export function registerTimeTravelCommands(program: Command, io: CliIo): void {
  program
    .command("fork")
    .description("make a new run holding a run's history up to a step: running it reuses the steps before, and runs that step and the rest afresh")
    .argument("<run>", "run id, slug or path")
    .requiredOption("--at <step>", "the first step the fork runs itself (a key `phasekit show` lists, e.g. build or lint#2)")
    .option("--id <id>", "the new run's id (default: a fresh one)")
    .action(async (target: string, o: { at: string; id?: string }, cmd: Command) => {
      const c = common(cmd, io);
      print(io, c.json, await forkAt(c.roots, target, o.at, o.id, io.now()));
    });

  program
    .command("rerun")
    .description("make a run run a step and every later one again at its next resume (nothing is deleted; the run must not be running)")
    .argument("<run>", "run id, slug or path")
    .requiredOption("--from <step>", "the first step to run again (a key `phasekit show` lists)")
    .argument("[reason...]", "why, recorded with the mark")
    .action(async (target: string, words: string[], o: { from: string }, cmd: Command) => {
      const c = common(cmd, io);
      print(io, c.json, await rerunAt(c.roots, target, o.from, words.length > 0 ? words.join(" ") : undefined, io.now()));
    });
}

function print(io: CliIo, json: boolean, outcome: TimeTravelOutcome): void {
  if (json) printJson(io, TIME_TRAVEL_SCHEMA, outcome.body);
  else io.stdout.write(`${outcome.text}\n`);
}
