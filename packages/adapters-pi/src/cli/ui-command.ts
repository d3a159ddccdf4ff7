/** `phasekit ui`: starts the inspector and keeps it running until Ctrl-C. */
import type { Command } from "commander";
import { common } from "./context.js";
import type { CliIo } from "./io.js";
import { usage } from "./io.js";
import { startInspector } from "./ui-server.js";

/** Registers `ui`. */
export function registerUiCommand(program: Command, io: CliIo): void {
  program
    .command("ui")
    .description("a local inspector page on 127.0.0.1: runs, a run's diagram, steps, payloads and journal; pause, stop, resume, cancel (open the printed URL: it carries this launch's secret token)")
    .option("--port <port>", "port to listen on (0: any free port)", port, 4317)
    .action(async (o: { port: number }, cmd: Command) => {
      const c = common(cmd, io);
      const inspector = await startInspector({ roots: c.roots, defDirs: c.defDirs, port: o.port, now: () => io.now() });
      // The token is this launch's secret: it is printed only here, in the one URL that opens the page.
      io.stdout.write(`phasekit inspector on ${inspector.url} (Ctrl-C to stop)\n`);
      await new Promise<void>((resolve) => {
        const stop = () => void inspector.close().then(resolve);
        process.once("SIGINT", stop);
        process.once("SIGTERM", stop);
      });
    });
}

function port(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65_535) usage(`--port ${value} is not a port (0-65535).`, { field: "port", value });
  return n;
}
