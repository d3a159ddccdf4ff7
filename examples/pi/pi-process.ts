/**
 * Runs the real pi CLI (either host) in RPC mode against the scripted model, offline: a private agent dir with
 * `models.json`, a session dir, our extension loaded with `-e`. Collects the JSON lines pi prints (events,
 * extension UI requests such as setStatus and notify) and lets a caller send commands, wait and kill.
 */
import { spawn, type ChildProcess } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";

/** Where a host's CLI is and which node runs it. */
export interface PiHost {
  readonly name: string;
  readonly node: string;
  readonly cli: string;
}

/** The dev-dependency host (`@mariozechner/pi-coding-agent` 0.73.1), run by the current node. */
export function devHost(): PiHost {
  // The package exports only an ESM entry, so locate it through the workspace's node_modules link.
  const dir = path.join(import.meta.dirname, "..", "..", "packages", "adapters-pi", "node_modules", "@mariozechner", "pi-coding-agent");
  return { name: "0.73.1", node: process.execPath, cli: path.join(fs.realpathSync(dir), "dist", "cli.js") };
}

/** Options of `startPi`. */
export interface StartPiOptions {
  readonly host: PiHost;
  readonly cwd: string;
  /** `$PI_CODING_AGENT_DIR` (models.json is written there). */
  readonly agentDir: string;
  readonly sessionDir: string;
  readonly extension: string;
  readonly baseUrl: string;
  /** `-c`: continue the newest session. */
  readonly continueSession?: boolean;
  readonly env?: Record<string, string>;
}

/** A running pi. */
export interface PiProcess {
  readonly child: ChildProcess;
  readonly lines: Array<Record<string, unknown>>;
  readonly stderr: () => string;
  send(command: Record<string, unknown>): void;
  /** Resolves with the first line (already seen or future) that `pred` accepts. */
  waitFor(pred: (line: Record<string, unknown>) => boolean, timeoutMs?: number, label?: string): Promise<Record<string, unknown>>;
  /** Every status text set for `key`, in order. */
  statuses(key?: string): Array<string | undefined>;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/** Writes models.json for the scripted provider. */
export function writeModels(agentDir: string, baseUrl: string): void {
  fs.mkdirSync(agentDir, { recursive: true });
  const models = {
    providers: {
      scripted: {
        baseUrl,
        api: "openai-completions",
        apiKey: "x",
        compat: { supportsDeveloperRole: false, supportsReasoningEffort: false },
        models: [{ id: "scripted-1", name: "Scripted", reasoning: false, input: ["text"], contextWindow: 128000, maxTokens: 4096 }],
      },
    },
  };
  fs.writeFileSync(path.join(agentDir, "models.json"), JSON.stringify(models, null, 2));
}

/** Starts pi in RPC mode. */
export function startPi(o: StartPiOptions): PiProcess {
  writeModels(o.agentDir, o.baseUrl);
  const args = [o.host.cli, "--mode", "rpc", "--provider", "scripted", "--model", "scripted-1", "-e", o.extension, "--no-extensions", "--no-skills", "--no-context-files", "--session-dir", o.sessionDir];
  if (o.continueSession) args.push("-c");
  const child = spawn(o.host.node, args, {
    cwd: o.cwd,
    env: { ...process.env, ...o.env, PI_CODING_AGENT_DIR: o.agentDir, PI_OFFLINE: "1", HOME: path.dirname(o.agentDir) },
    stdio: ["pipe", "pipe", "pipe"],
  });
  const lines: Array<Record<string, unknown>> = [];
  const waiters: Array<{ pred: (l: Record<string, unknown>) => boolean; resolve: (l: Record<string, unknown>) => void }> = [];
  let err = "";
  let buf = "";
  child.stderr?.on("data", (c: Buffer) => (err += c.toString("utf8")));
  child.stdout?.on("data", (c: Buffer) => {
    buf += c.toString("utf8");
    let i: number;
    while ((i = buf.indexOf("\n")) >= 0) {
      const text = buf.slice(0, i).trim();
      buf = buf.slice(i + 1);
      if (text === "") continue;
      let line: Record<string, unknown>;
      try {
        line = JSON.parse(text) as Record<string, unknown>;
      } catch {
        continue;
      }
      lines.push(line);
      for (const w of waiters.slice()) {
        if (w.pred(line)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(line);
        }
      }
    }
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return {
    child,
    lines,
    stderr: () => err,
    send: (command) => void child.stdin?.write(`${JSON.stringify(command)}\n`),
    waitFor(pred, timeoutMs = 30_000, label = "a line") {
      const seen = lines.find(pred);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`pi ${o.host.name}: waited ${timeoutMs} ms for ${label}\nstderr: ${err.slice(-2000)}`)), timeoutMs);
        waiters.push({ pred, resolve: (l) => (clearTimeout(t), resolve(l)) });
      });
    },
    statuses(key = "workflow") {
      return lines.filter((l) => l["type"] === "extension_ui_request" && l["method"] === "setStatus" && l["statusKey"] === key).map((l) => l["statusText"] as string | undefined);
    },
    async kill(signal = "SIGKILL") {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}

/** The custom entries and messages of the newest session file in `sessionDir`. */
export function readSession(sessionDir: string): Array<Record<string, unknown>> {
  const files: string[] = [];
  const walk = (d: string): void => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith(".jsonl")) files.push(p);
    }
  };
  if (!fs.existsSync(sessionDir)) return [];
  walk(sessionDir);
  files.sort((a, b) => fs.statSync(b).mtimeMs - fs.statSync(a).mtimeMs);
  const newest = files[0];
  if (newest === undefined) return [];
  return fs
    .readFileSync(newest, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .flatMap((l) => {
      try {
        return [JSON.parse(l) as Record<string, unknown>];
      } catch {
        return [];
      }
    });
}
