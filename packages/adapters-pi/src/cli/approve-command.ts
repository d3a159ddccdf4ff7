/**
 * `phasekit approve <run> [--name N] [--data JSON] [--reject] [reason...]`: files a person's decision for a run
 * that waits (`ctx.waitForApproval`, a phase's approve gate) through the store's control requests, the home of
 * every request another process makes to a run. The decision waits there, across crashes, until the run reads it;
 * the run checks the payload against the wait's schema (a refused payload is reported in its journal).
 */
import type { Command } from "commander";
import { requestApproval } from "../run/control-requests.js";
import { common } from "./context.js";
import { controlTarget } from "./control-actions.js";
import { locateRun } from "./run-view.js";
import { printJson, usage, type CliIo } from "./io.js";

/** The JSON document tag of `approve --json`. */
export const APPROVE_SCHEMA = "phasekit.approve/1";

/** Registers `approve`. */
export function registerApproveCommand(program: Command, io: CliIo): void {
  program
    .command("approve")
    .description("approve (or --reject) what a waiting run asks a person; the decision waits for the run, across crashes")
    .argument("<run>", "run id, slug or path")
    .argument("[reason...]", "why, recorded with the decision")
    .option("--name <name>", "the wait it answers (default: whichever the run waits for)")
    .option("--data <json>", "the payload, as JSON (checked by the run against the wait's schema)")
    .option("--reject", "reject instead of approving")
    .action(async (target: string, words: string[], o: { name?: string; data?: string; reject?: boolean }, cmd: Command) => {
      const c = common(cmd, io);
      const data = o.data === undefined ? undefined : parseData(o.data);
      const decision = o.reject === true ? ("reject" as const) : ("approve" as const);
      const slug = c.roots.store === undefined ? target : (await locateRun(c.roots, target)).slug;
      const request = await requestApproval({
        ...(await controlTarget(c.roots, slug, target)),
        ...(words.length > 0 ? { reason: words.join(" ") } : {}),
        approval: { decision, ...(o.name === undefined ? {} : { name: o.name }), ...(data === undefined ? {} : { data: data.value }) },
      });
      if (c.json) return printJson(io, APPROVE_SCHEMA, { target, request });
      const what = decision === "approve" ? "approval" : "rejection";
      io.stdout.write(`${what} filed for ${target}${o.name === undefined ? "" : ` (${o.name})`}: the run takes it when it waits for it.\n`);
    });
}

function parseData(text: string): { value: unknown } {
  try {
    return { value: JSON.parse(text) as unknown };
  } catch (error) {
    return usage(`--data is not JSON: ${(error as Error).message}`, { field: "--data", hint: `quote it for the shell, e.g. --data '{"channel":"beta"}'` });
  }
}
