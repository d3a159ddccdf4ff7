/** Spawns test/helpers/machine.ts as a separate process and collects its JSON event lines. */
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";

const MACHINE = fileURLToPath(new URL("./machine.ts", import.meta.url));
const REPO = fileURLToPath(new URL("../../../../", import.meta.url));

/** One event line of a machine. */
export interface MachineEvent {
  pid: number;
  t: number;
  ev: string;
  i?: number;
  reused?: boolean;
  status?: string;
  code?: string;
  message?: string;
  connectionLost?: boolean;
  /** The displaced epoch of a LOCK_LOST. */
  epoch?: number;
}

/** A running machine: its events so far, a wait for one, and its exit. */
export interface Machine {
  proc: ChildProcess;
  events: MachineEvent[];
  waitFor(pred: (e: MachineEvent) => boolean, timeoutMs?: number): Promise<MachineEvent>;
  exited: Promise<number | null>;
}

/** Starts a machine; see machine.ts for the arguments. */
export function spawnMachine(args: { url: string; namespace: string; slug: string; steps: number; stepMs: number; leaseMs: number; mode: "workflow" | "raw" }): Machine {
  const proc = spawn(process.execPath, ["--import", "tsx", "--conditions=@phasekit/source", MACHINE, args.url, args.namespace, args.slug, String(args.steps), String(args.stepMs), String(args.leaseMs), args.mode], {
    cwd: REPO,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const events: MachineEvent[] = [];
  const waiters = new Set<() => void>();
  let buf = "";
  let stderr = "";
  proc.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
  proc.stdout?.on("data", (d: Buffer) => {
    buf += d.toString();
    let nl: number;
    while ((nl = buf.indexOf("\n")) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      if (line.startsWith("{")) events.push(JSON.parse(line) as MachineEvent);
    }
    for (const w of waiters) w();
  });
  const exited = new Promise<number | null>((resolve) => proc.on("exit", (code) => resolve(code)));
  const waitFor = (pred: (e: MachineEvent) => boolean, timeoutMs = 30_000): Promise<MachineEvent> =>
    new Promise((resolve, reject) => {
      const check = (): void => {
        const hit = events.find(pred);
        if (hit === undefined) return;
        waiters.delete(check);
        clearTimeout(timer);
        resolve(hit);
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`machine ${proc.pid}: no matching event in ${timeoutMs} ms; events ${JSON.stringify(events)}; stderr ${stderr}`));
      }, timeoutMs);
      waiters.add(check);
      void exited.then(() => setTimeout(check, 0));
      check();
    });
  return { proc, events, waitFor, exited };
}

const REQUESTER = fileURLToPath(new URL("./request-control.ts", import.meta.url));

/** Runs test/helpers/request-control.ts in its own process: files a pause or stop through the pg store. */
export function requestFromAnotherProcess(args: { url: string; namespace: string; slug: string; signal: "pause" | "stop"; reason: string }): Promise<{ ok: boolean; pid: number; request?: { signal: string; reason: string; requestedBy: { pid: number } }; code?: string }> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, ["--import", "tsx", "--conditions=@phasekit/source", REQUESTER, args.url, args.namespace, args.slug, args.signal, args.reason], {
      cwd: REPO,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    proc.stdout?.on("data", (d: Buffer) => (out += d.toString()));
    proc.stderr?.on("data", (d: Buffer) => (err += d.toString()));
    proc.on("exit", (code) => {
      const line = out.split("\n").find((l) => l.startsWith("{"));
      if (code !== 0 || line === undefined) reject(new Error(`requester exited ${String(code)}: ${out} ${err}`));
      else resolve(JSON.parse(line) as never);
    });
  });
}
