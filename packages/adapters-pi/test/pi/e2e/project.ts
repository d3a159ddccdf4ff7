/** One throwaway project for the real-CLI tests: the example workflows, a scripted model, and pi started on it. */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { EXAMPLE_WORKFLOWS } from "../../../../../examples/pi/ship-scenario.js";
import { readSession, startPi, type PiHost, type PiProcess } from "../../../../../examples/pi/pi-process.js";
import { startScriptedModel, type ScriptedModel } from "../../../../../examples/pi/scripted-model.js";
import { EXTENSION_FILE } from "../hosts.js";

/** A project and its model; `start` runs pi (RPC mode) in it, `close` kills every pi it started. */
export interface E2eProject {
  readonly root: string;
  readonly cwd: string;
  readonly sessionDir: string;
  /** `$PI_CODING_AGENT_DIR` (models.json; a test may add settings.json). */
  readonly agentDir: string;
  readonly model: ScriptedModel;
  start(o?: { continueSession?: boolean; env?: Record<string, string>; extension?: string; sessionDir?: string }): PiProcess;
  session(): Array<Record<string, unknown>>;
  /** The newest `workflow:state` entry's data in the session file. */
  lastState(): Record<string, unknown> | undefined;
  close(): Promise<void>;
}

export async function e2eProject(host: PiHost, prefix: string): Promise<E2eProject> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), `phasekit-${prefix}-`));
  const cwd = path.join(root, "project");
  fs.mkdirSync(path.join(cwd, ".pi"), { recursive: true });
  fs.cpSync(EXAMPLE_WORKFLOWS, path.join(cwd, ".pi", "workflows"), { recursive: true });
  const model = await startScriptedModel();
  const sessionDir = path.join(root, "sessions");
  const agentDir = path.join(root, "home", ".pi", "agent");
  const started: PiProcess[] = [];
  const p: E2eProject = {
    root,
    cwd,
    sessionDir,
    agentDir,
    model,
    start(o = {}) {
      const pi = startPi({
        host,
        cwd,
        agentDir,
        sessionDir: o.sessionDir ?? sessionDir,
        extension: o.extension ?? EXTENSION_FILE,
        baseUrl: model.baseUrl,
        continueSession: o.continueSession,
        env: { PHASEKIT_COUNTDOWN_MS: "60000", ...o.env },
      });
      started.push(pi);
      return pi;
    },
    session: () => readSession(sessionDir),
    lastState() {
      const s = p.session().filter((e) => e["type"] === "custom" && e["customType"] === "workflow:state");
      return s.at(-1)?.["data"] as Record<string, unknown> | undefined;
    },
    async close() {
      for (const pi of started) await pi.kill("SIGKILL");
      await model.close();
      fs.rmSync(root, { recursive: true, force: true });
    },
  };
  return p;
}

/** Polls `check` until true (an event we cannot subscribe to: a file written by another process). */
export async function until(check: () => boolean, label: string, timeoutMs = 20_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${label}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Every notify text pi's RPC mode printed. */
export const notices = (pi: PiProcess): string[] => pi.lines.filter((l) => l["method"] === "notify").map((l) => String(l["message"]));
