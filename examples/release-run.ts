/**
 * A durable run of the release example: every concrete phase is one `ctx.step` doing real work in a scratch
 * repository, and the core workflow state moves along with it (persisted in workflow.json). The demo runs it,
 * kills it, and resumes it; the tests import it too.
 */
import { createHash } from "node:crypto";
import { appendFileSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { advance, refusalToError, start, type WorkflowRegistry } from "@phasekit/core";
import type { JsonValue, RunContext } from "@phasekit/adapters-pi";
import { releaseRegistry } from "./release-workflow.js";

/** The concrete phase ids the release workflow visits in order (computed by walking the pure core). */
export function releasePhaseOrder(registry: WorkflowRegistry = releaseRegistry()): string[] {
  const started = start(registry, { workflowKey: "release", taskId: "order", taskDescription: "" }, { now: 0 });
  if (!started.ok) throw refusalToError(started.error);
  const ids: string[] = [];
  let outcome = advance(registry, started.state, { now: 0 });
  if (started.happened.type === "started") ids.push(started.happened.to.phaseId);
  while (outcome.ok && "to" in outcome.happened) {
    ids.push(outcome.happened.to.phaseId);
    outcome = advance(registry, outcome.state, { now: 0 });
  }
  return ids;
}

/** Real work per phase, on files of the scratch repository. Each appends one line to `side-effects.log`. */
// Step outputs are typed as JSON: the compiler refuses a Date, a Map or undefined before a run ever stores one.
const WORK: Record<string, (repo: string) => { [key: string]: JsonValue }> = {
  build(repo) {
    mkdirSync(path.join(repo, "dist"), { recursive: true });
    const source = readFileSync(path.join(repo, "src", "app.js"), "utf8");
    const bundle = `// bundled\n${source}`;
    writeFileSync(path.join(repo, "dist", "app.js"), bundle);
    return { bundle: "dist/app.js", sha256: sha(bundle).slice(0, 12), bytes: bundle.length };
  },
  "static-analysis"(repo) {
    const files = readdirSync(path.join(repo, "src"));
    const todos = files.reduce((n, f) => n + (readFileSync(path.join(repo, "src", f), "utf8").match(/TODO/g)?.length ?? 0), 0);
    return { files: files.length, todos };
  },
  "threat-model"(repo) {
    const source = readFileSync(path.join(repo, "src", "app.js"), "utf8");
    return { usesEval: source.includes("eval("), entryPoints: (source.match(/export /g) ?? []).length };
  },
  "dependency-audit"(repo) {
    const pkg = JSON.parse(readFileSync(path.join(repo, "package.json"), "utf8")) as { dependencies?: Record<string, string> };
    const deps = Object.keys(pkg.dependencies ?? {});
    return { dependencies: deps.length, unpinned: deps.filter((d) => /^[\^~]/.test(pkg.dependencies?.[d] ?? "")) };
  },
  publish(repo) {
    const bundle = readFileSync(path.join(repo, "dist", "app.js"), "utf8");
    const manifest = { name: "demo-app", version: "1.2.0", integrity: `sha256-${sha(bundle)}` };
    writeFileSync(path.join(repo, "dist", "manifest.json"), JSON.stringify(manifest, null, 2));
    return { manifest: "dist/manifest.json", integrity: manifest.integrity.slice(0, 19) };
  },
};

/** Creates the scratch repository the release run works on. */
export function seedRepo(repo: string): void {
  mkdirSync(path.join(repo, "src"), { recursive: true });
  writeFileSync(path.join(repo, "src", "app.js"), "export function greet(n) {\n  // TODO: localise\n  return `hi ${n}`;\n}\n");
  writeFileSync(path.join(repo, "src", "util.js"), "export const clamp = (x, a, b) => Math.min(b, Math.max(a, x)); // TODO: tests\n");
  writeFileSync(path.join(repo, "package.json"), JSON.stringify({ name: "demo-app", dependencies: { zod: "^4.6.7", tslib: "2.8.1" } }));
}

/** Hooks the demo uses to watch a step from outside (print, or get killed mid-step). */
export interface ReleaseRunHooks {
  stepStarted?(phaseId: string): void | Promise<void>;
  /** Pause inside each step so the demo can kill the process while work is in flight. */
  stepDelayMs?: number;
}

/**
 * The body of the durable release run: one checkpointed step per phase, then the core workflow advances. On a
 * resume both replay from the run's history: completed steps return their outputs and the advances already made
 * return their recorded outcomes, so the workflow never moves twice. Returns every step's output.
 */
export async function releaseRunBody(ctx: RunContext, repo: string, hooks: ReleaseRunHooks = {}): Promise<Record<string, unknown>> {
  const outputs: Record<string, unknown> = {};
  for (const phaseId of releasePhaseOrder(ctx.workflow?.registry)) {
    const input = { phaseId, previous: outputs[Object.keys(outputs).at(-1) ?? ""] ?? null };
    outputs[phaseId] = await ctx.step(phaseId, input, async () => {
      await hooks.stepStarted?.(phaseId);
      if (hooks.stepDelayMs) await sleep(hooks.stepDelayMs);
      const work = WORK[phaseId];
      if (work === undefined) throw new Error(`no work defined for phase ${phaseId}`);
      const output = work(repo);
      appendFileSync(path.join(repo, "side-effects.log"), `${phaseId}\n`);
      return output;
    });
    const wf = ctx.workflow;
    if (wf !== null) {
      const moved = await wf.dispatch({ type: "advance" });
      if (!moved.ok) throw moved.error;
    }
  }
  return outputs;
}

function sha(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}
