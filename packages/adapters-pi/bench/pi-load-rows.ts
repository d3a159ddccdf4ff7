/**
 * What loading the extension adds to pi 1.5.2's start, against pi-workflows 1.0.0 in the same run: pi started in
 * RPC mode (offline, a fresh agent folder, no other extensions) until it answers its first command, with the file
 * our package's manifest names (the bundle, scripts/bundle-pi.mjs, rebuilt from dist/ first), with the unbundled
 * built entry (what the `/pi` subpath gives composing extensions), with pi-workflows' published one, and with an
 * empty extension (the floor all are measured against). Starts interleaved round by round; medians. Skipped (no
 * rows) when pi 1.5.2 is not installed.
 */
import { execFileSync, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import type { BenchRow } from "../../../bench/harness.js";
import { median } from "../../../bench/suites/interleave.js";
import { writeModels } from "../../../examples/pi/pi-process.js";

const ROOT = path.resolve(import.meta.dirname, "..", "..", "..");
const PKG = path.join(ROOT, "packages", "adapters-pi");
const EXTENSION = path.join(PKG, "dist", "pi", "extension.bundle.js");
const UNBUNDLED = path.join(PKG, "dist", "pi", "default-extension.js");
const LIMIT_NS = 100_000_000;

/** Milliseconds from spawning pi until it answers `get_state` (its extensions loaded and the session started). */
function startTime(host: { node: string; cli: string }, extension: string, work: string): Promise<number> {
  const agentDir = fs.mkdtempSync(path.join(work, "agent-"));
  writeModels(agentDir, "http://127.0.0.1:9/v1");
  const cwd = fs.mkdtempSync(path.join(work, "cwd-"));
  const args = [host.cli, "--mode", "rpc", "--provider", "scripted", "--model", "scripted-1", "-e", extension, "--no-extensions", "--no-skills", "--no-context-files", "--session-dir", path.join(cwd, "sessions")];
  const started = process.hrtime.bigint();
  const child = spawn(host.node, args, { cwd, env: { ...process.env, PI_CODING_AGENT_DIR: agentDir, PI_OFFLINE: "1", HOME: path.dirname(agentDir), PHASEKIT_PLAN_ROOT: "off" }, stdio: ["pipe", "pipe", "pipe"] });
  return new Promise((resolve, reject) => {
    let out = "";
    let err = "";
    const timer = setTimeout(() => (child.kill("SIGKILL"), reject(new Error(`pi did not answer in 60 s: ${err.slice(-1000)}`))), 60_000);
    child.stderr.on("data", (c: Buffer) => (err += c.toString("utf8")));
    child.stdout.on("data", (c: Buffer) => {
      out += c.toString("utf8");
      if (!out.includes('"command":"get_state"')) return;
      const ns = Number(process.hrtime.bigint() - started);
      clearTimeout(timer);
      child.kill("SIGKILL");
      resolve(ns);
    });
    child.stdin.write(`${JSON.stringify({ id: "1", type: "get_state" })}\n`);
  });
}

/** Rows: phasekit's and pi-workflows' load cost over an empty extension (reported), and ours against the goal. */
export async function loadRows(): Promise<BenchRow[]> {
  const hosts = process.env["PHASEKIT_PI_HOSTS_DIR"] ?? "/tmp/pi-hosts";
  const host = { node: path.join(hosts, "node22", "node_modules", ".bin", "node"), cli: path.join(hosts, "pi-1.5.2", "package", "dist", "bundle", "cli.js") };
  const peer = path.join(hosts, "pi-workflows-1.0.0", "package", "src", "index.ts");
  if (fs.existsSync(UNBUNDLED)) execFileSync(process.execPath, [path.join(PKG, "scripts", "bundle-pi.mjs")], { cwd: PKG, stdio: "inherit" });
  if (![host.node, host.cli, peer, EXTENSION].every((f) => fs.existsSync(f))) {
    process.stderr.write("bench: pi 1.5.2, pi-workflows 1.0.0 or the built extension missing (.ci/setup-pi.sh, tsc -b): extension load rows skipped\n");
    return [];
  }
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "phasekit-bench-load-"));
  try {
    const empty = path.join(work, "empty-extension.js");
    fs.writeFileSync(empty, "export default function () {}\n");
    const contenders: Record<string, string> = { empty, phasekit: EXTENSION, unbundled: UNBUNDLED, piWorkflows: peer };
    const samples: Record<string, number[]> = { empty: [], phasekit: [], unbundled: [], piWorkflows: [] };
    const names = Object.keys(contenders);
    const rounds = process.env["CI"] ? 3 : 9;
    for (let round = -1; round < rounds; round++) {
      for (let k = 0; k < names.length; k++) {
        const name = names[(round + 1 + k) % names.length] as string;
        const ns = await startTime(host, contenders[name] as string, work);
        if (round >= 0) samples[name]?.push(ns); // round -1 warms the disk cache and jiti's transpile cache
      }
    }
    // Each contender minus the empty extension of the same round (a loaded machine drifts between rounds), median.
    const floor = median(samples["empty"] as number[]);
    const over = (name: string) => median((samples[name] as number[]).map((ns, i) => ns - ((samples["empty"] as number[])[i] as number)));
    const ours = over("phasekit");
    const theirs = over("piWorkflows");
    const unbundled = over("unbundled");
    return [
      { subject: "extension load (the bundle the package's pi manifest names): pi 1.5.2 start to its first RPC answer, minus the same with an empty extension", baseline: "pi-workflows 1.0.0, the same", subjectNs: ours, baselineNs: theirs, goal: "≤ 0.1 s", met: ours <= LIMIT_NS },
      { subject: "extension load of the unbundled built entry (the /pi subpath, ~190 modules), the same way", baseline: "the bundle the manifest names", subjectNs: unbundled, baselineNs: ours, goal: "report" },
      { subject: "pi 1.5.2 start to its first RPC answer with phasekit (the floor with an empty extension is the baseline)", baseline: "pi 1.5.2 with an empty extension", subjectNs: ours + floor, baselineNs: floor, goal: "report" },
    ];
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}
