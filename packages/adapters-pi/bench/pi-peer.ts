/**
 * pi-workflows 1.0.0, the peer the pi benches compare with: fetched with `npm pack` into a cache folder (its
 * TypeScript sources run through tsx) with a stub for the one host import its config loader makes at run time.
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { pathToFileURL } from "node:url";

const CACHE = path.resolve(import.meta.dirname, "..", "node_modules", ".cache", "pi-workflows-1.0.0");

/** The unpacked package's `src` folder (downloaded on first use). */
export function piWorkflowsSrc(): string {
  const src = path.join(CACHE, "package", "src");
  if (!fs.existsSync(path.join(src, "hooks.ts"))) {
    fs.rmSync(CACHE, { recursive: true, force: true });
    fs.mkdirSync(CACHE, { recursive: true });
    execFileSync("npm", ["pack", "--silent", "@harms-haus/pi-workflows@1.0.0"], { cwd: CACHE, stdio: ["ignore", "ignore", "inherit"] });
    execFileSync("tar", ["xzf", "harms-haus-pi-workflows-1.0.0.tgz"], { cwd: CACHE });
  }
  // Its config loader imports parseFrontmatter from the host at run time: the dev-dependency host's own one.
  const stub = path.join(CACHE, "node_modules", "@earendil-works", "pi-coding-agent");
  const host = pathToFileURL(path.join(fs.realpathSync(path.resolve(import.meta.dirname, "..", "node_modules", "@mariozechner", "pi-coding-agent")), "dist", "index.js")).href;
  fs.mkdirSync(stub, { recursive: true });
  fs.writeFileSync(path.join(stub, "package.json"), JSON.stringify({ name: "@earendil-works/pi-coding-agent", type: "module", main: "index.js" }));
  fs.writeFileSync(path.join(stub, "index.js"), `export { parseFrontmatter } from ${JSON.stringify(host)};\n`);
  return src;
}

/** The functions compared. */
export interface PiWorkflowsPeer {
  reconstructState(ctx: { sessionManager: { getBranch(): unknown[] } }): unknown;
  handleToolCall(event: { toolName: string }, state: unknown, definitions: Record<string, unknown>): unknown;
  /** Its session start reads the definitions (global and `<cwd>/.pi/workflows`). */
  loadWorkflows(cwd?: string): Record<string, unknown>;
  /** What its workflow_step `next` does: advance, then append the state entry. */
  advancePhase(state: unknown, definitions: Record<string, unknown>): { newState: unknown };
  persistState(pi: { appendEntry(type: string, data: unknown): void }, state: unknown): void;
}

/** Imports the peer's functions from its sources. */
export async function loadPeer(): Promise<PiWorkflowsPeer> {
  const src = piWorkflowsSrc();
  const state = (await import(path.join(src, "state.ts"))) as Pick<PiWorkflowsPeer, "reconstructState" | "advancePhase" | "persistState">;
  const hooks = (await import(path.join(src, "hooks.ts"))) as Pick<PiWorkflowsPeer, "handleToolCall">;
  const loading = (await import(path.join(src, "config", "loading.ts"))) as Pick<PiWorkflowsPeer, "loadWorkflows">;
  return { reconstructState: state.reconstructState, handleToolCall: hooks.handleToolCall, loadWorkflows: loading.loadWorkflows, advancePhase: state.advancePhase, persistState: state.persistState };
}

/**
 * Interleaved rounds: each round runs a batch of every contender (order alternating), so drift of the machine
 * hits all of them alike. Returns the median ns per call of each.
 */
export function interleaved(contenders: Record<string, () => unknown>, opts: { rounds: number; batch: number }): Record<string, number> {
  const names = Object.keys(contenders);
  const samples: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
  for (let round = 0; round < opts.rounds; round++) {
    const order = round % 2 === 0 ? names : [...names].reverse();
    for (const name of order) {
      const fn = contenders[name] as () => unknown;
      const t0 = process.hrtime.bigint();
      for (let i = 0; i < opts.batch; i++) fn();
      samples[name]?.push(Number(process.hrtime.bigint() - t0) / opts.batch);
    }
  }
  const out: Record<string, number> = {};
  for (const n of names) {
    const s = (samples[n] as number[]).sort((a, b) => a - b);
    out[n] = s[Math.floor(s.length / 2)] as number;
  }
  return out;
}
