#!/usr/bin/env node
/**
 * `phasekit`: a small command line over plan folders, so shell steps can pipe a run's state and other processes
 * can pause or stop a run. Every failure prints the typed error as JSON on stderr and exits 1 (usage errors: 2).
 */
import { parseArgs } from "node:util";
import { isWorkflowError } from "@phasekit/core";
import { requestPause, requestStop } from "../run/control-requests.js";
import { createFsPlanStore } from "../store/plan-store.js";
import { analyzeResumeTarget } from "../run/resume-analysis.js";
import { readRunStateFrom, writeRunStateTo } from "../run/state-io.js";
import { resolveRunTarget } from "../run/target.js";

const USAGE = `usage: phasekit <command> [options]
  state show <target>        print the run's state (workflow.json) as canonical JSON, for a pipe
  state check                read a run's state from stdin, validate it, print it again
  inspect <target> --tool T  can tool T resume the run? (not-found / ambiguous / owned-by-other / resumable)
  list                       every run under the plan root with its status
  pause <target> [reason]    ask the running run to pause at its next step
  stop <target> [reason]     ask the running run to stop (ends cancelled) at its next step
options: --repo DIR (default: cwd)  --plan-root DIR (default: <repo>/ai_plan)`;

/** Runs the CLI with `argv` (without node and the script); resolves with the exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: [...argv],
    allowPositionals: true,
    options: { repo: { type: "string" }, "plan-root": { type: "string" }, tool: { type: "string" }, help: { type: "boolean" } },
  });
  const roots = { repoRoot: values.repo ?? process.cwd(), ...(values["plan-root"] ? { planRoot: values["plan-root"] } : {}) };
  const [command, ...rest] = positionals;
  if (values.help || command === undefined) return usage(values.help ? 0 : 2);
  switch (command) {
    case "state":
      return rest[0] === "show" && rest[1] ? stateShow(roots, rest[1]) : rest[0] === "check" ? stateCheck() : usage(2);
    case "inspect": {
      if (!rest[0] || !values.tool) return usage(2);
      const a = await analyzeResumeTarget({ ...roots, target: rest[0], invokedTool: values.tool });
      process.stdout.write(`${JSON.stringify(a, null, 2)}\n`);
      return a.kind === "resumable" ? 0 : 1;
    }
    case "list": {
      const store = createFsPlanStore(roots);
      for (const run of await store.list()) {
        const what = run.ok ? (run.metadata ? `${run.metadata.status}\t${run.metadata.ownerTool}\t${run.metadata.updatedAt}` : "no workflow.json") : `unreadable: ${run.error.code}`;
        process.stdout.write(`${run.slug}\t${what}\n`);
      }
      return 0;
    }
    case "pause":
    case "stop": {
      if (!rest[0]) return usage(2);
      const request = command === "pause" ? requestPause : requestStop;
      const r = await request({ ...roots, target: rest[0], ...(rest[1] ? { reason: rest.slice(1).join(" ") } : {}) });
      process.stdout.write(`${JSON.stringify(r)}\n`);
      return 0;
    }
    default:
      return usage(2);
  }
}

async function stateShow(roots: { repoRoot: string; planRoot?: string }, target: string): Promise<number> {
  const found = await resolveRunTarget({ ...roots, target });
  if (found.kind !== "found") return fail(found.kind === "new" ? { code: "NOT_FOUND", message: `no run ${target}` } : found.error);
  const store = createFsPlanStore({ repoRoot: roots.repoRoot, planRoot: found.location.planRoot });
  const read = await store.readMetadata(found.location.slug);
  await store.close();
  if (!read.ok) return fail(read.error);
  if (read.metadata === null) return fail({ code: "NOT_FOUND", message: `run ${target} has no workflow.json` });
  writeRunStateTo(read.metadata);
  return 0;
}

async function stateCheck(): Promise<number> {
  const r = await readRunStateFrom(process.stdin);
  if (!r.ok) return fail(r.error);
  writeRunStateTo(r.metadata);
  return 0;
}

function fail(error: unknown): number {
  const body = isWorkflowError(error) ? error.toJSON() : error;
  process.stderr.write(`${JSON.stringify(body)}\n`);
  return 1;
}

function usage(code: number): number {
  (code === 0 ? process.stdout : process.stderr).write(`${USAGE}\n`);
  return code;
}

// Run when executed directly (not when imported by the tests).
if (process.argv[1] !== undefined && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  main(process.argv.slice(2)).then(
    (code) => (process.exitCode = code),
    (error: unknown) => (process.exitCode = fail(error)),
  );
}
