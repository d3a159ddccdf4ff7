/**
 * The pi scenario the demo shows and the end-to-end tests assert on, with the real pi CLI of a host and the
 * scripted model: `/workflow ship …` in a project whose `.pi/workflows` is the example folder (pi-workflows
 * format); the model tries a blocked tool, advances, and pi is SIGKILLed mid-request; `pi -c` resumes at the
 * same phase and the model walks to the end; one completion message; a second `-c` sends nothing again.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { readSession, startPi, type PiHost, type PiProcess } from "./pi-process.js";
import { startScriptedModel, type SeenRequest } from "./scripted-model.js";

/** What happened, for printing or asserting. */
export interface ShipScenarioResult {
  readonly requests: readonly SeenRequest[];
  /** Status texts of the first run, the resumed run and the final check run. */
  readonly statuses: readonly (string | undefined)[][];
  /** The session file after the last run. */
  readonly session: ReadonlyArray<Record<string, unknown>>;
  /** Index into `requests` of the first request after the resume. */
  readonly firstRequestAfterResume: number;
  readonly root: string;
}

/** The example workflow folder (pi-workflows 1.0.0 format). */
export const EXAMPLE_WORKFLOWS = path.join(import.meta.dirname, "workflows");

/** Options: which host, which extension file, where to log progress. */
export interface ShipScenarioOptions {
  readonly host: PiHost;
  readonly extension: string;
  readonly log?: (line: string) => void;
  readonly keep?: boolean;
}

function sessionHas(sessionDir: string, pred: (e: Record<string, unknown>) => boolean): boolean {
  try {
    return readSession(sessionDir).some(pred);
  } catch {
    return false;
  }
}

async function until(check: () => boolean, timeoutMs: number, label: string): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${label}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const stateAt = (phaseIndexPath: number[]) => (e: Record<string, unknown>): boolean => {
  if (e["type"] !== "custom" || e["customType"] !== "workflow:state") return false;
  const p = (e["data"] as { currentPath?: Array<{ phaseIndex: number }> }).currentPath ?? [];
  return p.length === phaseIndexPath.length && p.every((s, i) => s.phaseIndex === phaseIndexPath[i]);
};

/** Runs the scenario; throws with pi's stderr when a step does not happen. */
export async function runShipScenario(o: ShipScenarioOptions): Promise<ShipScenarioResult> {
  const log = o.log ?? (() => undefined);
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "phasekit-pi-"));
  const cwd = path.join(root, "project");
  fs.mkdirSync(path.join(cwd, ".pi"), { recursive: true });
  fs.cpSync(EXAMPLE_WORKFLOWS, path.join(cwd, ".pi", "workflows"), { recursive: true });
  const agentDir = path.join(root, "home", ".pi", "agent");
  const sessionDir = path.join(root, "sessions");
  const model = await startScriptedModel();
  const env = { PHASEKIT_COUNTDOWN_MS: "60000" };
  const base = { host: o.host, cwd, agentDir, sessionDir, extension: o.extension, baseUrl: model.baseUrl, env };
  const statuses: (string | undefined)[][] = [];
  let pi: PiProcess | undefined;
  try {
    model.push(
      { tool: "write", args: { path: "NOTES.md", content: "plan" } },
      { tool: "workflow_step", args: { action: "next", summary: "Plan: add the flag in cli.ts" } },
      { text: "Running the tests now…", hold: true },
    );
    log(`pi ${o.host.name}: /workflow ship "Add a --version flag"`);
    pi = startPi(base);
    pi.send({ type: "prompt", message: "/workflow ship Add a --version flag" });
    await model.waitForRequests(3, 60_000);
    await until(() => sessionHas(sessionDir, stateAt([1, 0])), 20_000, "the Test phase in the session file");
    log(`pi ${o.host.name}: SIGKILL while the model is answering in phase Test`);
    await pi.kill("SIGKILL");
    statuses.push(pi.statuses());

    model.release();
    model.push(
      { tool: "workflow_step", args: { action: "next", summary: "tests pass" } },
      { tool: "workflow_step", args: { action: "next" } },
      { tool: "workflow_step", args: { action: "next", summary: "reported" } },
      { text: "All done." },
    );
    log(`pi ${o.host.name} -c: continue the killed session`);
    pi = startPi({ ...base, continueSession: true });
    await pi.waitFor((l) => l["method"] === "setStatus" && typeof l["statusText"] === "string" && (l["statusText"] as string).includes("Test"), 30_000, "the resumed status");
    const firstRequestAfterResume = model.requests.length;
    pi.send({ type: "prompt", message: "Continue the workflow." });
    await until(() => sessionHas(sessionDir, (e) => e["type"] === "custom_message" && e["customType"] === "workflow:complete"), 60_000, "the completion message");
    await new Promise((r) => setTimeout(r, 300));
    await pi.kill("SIGTERM");
    statuses.push(pi.statuses());

    log(`pi ${o.host.name} -c again: nothing is sent twice`);
    pi = startPi({ ...base, continueSession: true });
    await pi.waitFor((l) => l["type"] === "response" || l["method"] === "setStatus", 30_000, "startup");
    pi.send({ type: "get_state" });
    await pi.waitFor((l) => l["type"] === "response" && l["command"] === "get_state", 30_000, "get_state");
    await new Promise((r) => setTimeout(r, 500));
    await pi.kill("SIGTERM");
    statuses.push(pi.statuses());
    return { requests: model.requests, statuses, session: readSession(sessionDir), firstRequestAfterResume, root };
  } finally {
    await pi?.kill("SIGKILL");
    await model.close();
    if (!o.keep) fs.rmSync(root, { recursive: true, force: true });
  }
}
