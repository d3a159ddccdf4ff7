/**
 * `phasekit`: look at and steer durable runs from a shell. Commands are declared with commander (per-command
 * help, "did you mean" for typos); each one reads runs through run-view.ts and prints text or, with `--json`, a
 * versioned document. Exit codes: see io.ts (`EXIT`). The bin (bin/phasekit.js) only calls `main`.
 */
import { readFileSync } from "node:fs";
import { Command, CommanderError, Option } from "commander";
import { registerControlCommands } from "./control-commands.js";
import { registerApproveCommand } from "./approve-command.js";
import { registerResumeDueCommand } from "./resume-due.js";
import { registerDefinitionCommands } from "./defs-commands.js";
import { CliFailure, EXIT, printFailure, processIo, toFailure, type CliIo } from "./io.js";
import { registerRunCommands } from "./runs-commands.js";
import { registerStateCommands } from "./state-commands.js";
import { registerUiCommand } from "./ui-command.js";
import { registerTimeTravelCommands } from "./time-travel-commands.js";
import { closeStores } from "./store-runs.js";

/** The package version (read once, lazily: importing this module has no side effect). */
function version(): string {
  const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };
  return pkg.version;
}

/**
 * Builds the command tree; `setExit` lets a command end with a non-zero code without throwing. With `json`,
 * commander's own error text is held back: `main` prints the usage error as a phasekit.error/1 document instead.
 */
export function buildProgram(io: CliIo, setExit: (code: number) => void, json = false): Command {
  const program = new Command("phasekit")
    .description("look at and steer phasekit runs (plan folders) from a shell")
    .version(version(), "-v, --version")
    .addOption(new Option("--repo <dir>", "the repository whose plan folder to use (default: the current folder)"))
    .addOption(new Option("--plan-root <dir>", "the plan root (default: <repo>/ai_plan)"))
    .addOption(new Option("--store <url>", "runs kept in a store instead of the plan folder: postgres://user@host:port/db[?namespace=NAME] (needs @phasekit/store-postgres; default: $PHASEKIT_STORE)"))
    .addOption(
      new Option("--defs <dir>", "a workflow definition folder; repeat for more (default: pi's global and <repo>/.pi/workflows)").argParser(
        (value: string, previous: string[] | undefined) => [...(previous ?? []), value],
      ),
    )
    .addOption(new Option("--json", "print a versioned JSON document instead of text"))
    .showSuggestionAfterError(true)
    .showHelpAfterError("(run `phasekit --help` for the commands, `phasekit <command> --help` for one)")
    .configureHelp({ showGlobalOptions: true, sortSubcommands: false })
    .configureOutput({ writeOut: (s) => void io.stdout.write(s), writeErr: (s) => void (json ? undefined : io.stderr.write(s)) })
    .exitOverride();
  registerRunCommands(program, io);
  registerStateCommands(program, io);
  registerDefinitionCommands(program, io, setExit);
  registerControlCommands(program, io, setExit);
  registerApproveCommand(program, io);
  registerResumeDueCommand(program, io, setExit);
  registerTimeTravelCommands(program, io);
  registerUiCommand(program, io);
  program.addHelpText(
    "after",
    "\nExit codes: 0 done, 1 failed or problems found, 2 bad usage, 3 no such run or workflow, 4 run busy (locked).\nDocs: docs/cli.md",
  );
  // Every subcommand shares the parent's output and exit handling (commander copies settings at creation only).
  for (const cmd of allCommands(program)) cmd.exitOverride().configureOutput(program.configureOutput()).showSuggestionAfterError(true);
  return program;
}

function allCommands(cmd: Command): Command[] {
  return cmd.commands.flatMap((c) => [c, ...allCommands(c)]);
}

/** Runs the CLI with `argv` (without node and the script) and resolves with the exit code. */
export async function main(argv: readonly string[], io: CliIo = processIo()): Promise<number> {
  let code: number = EXIT.ok;
  const json = argv.includes("--json");
  const program = buildProgram(io, (c) => (code = Math.max(code, c)), json);
  try {
    await program.parseAsync([...argv], { from: "user" });
    return code;
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help and --version end through here with exit code 0; anything else commander refuses is bad usage.
      if (error.exitCode === 0 || error.code === "commander.helpDisplayed" || error.code === "commander.version") return EXIT.ok;
      if (json) {
        const message = error.code === "commander.help" ? "no command given (run `phasekit --help` for the commands)" : error.message.replace(/^error: /, "");
        printFailure(io, new CliFailure({ code: "USAGE", message, details: { reason: error.code } }, EXIT.usage), true);
      }
      return EXIT.usage;
    }
    const failure = toFailure(error);
    printFailure(io, failure, json);
    return failure.exitCode;
  } finally {
    // A store opened by URL keeps a pool: closed here, or the process would wait for its idle connections.
    await closeStores();
  }
}
