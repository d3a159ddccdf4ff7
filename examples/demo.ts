/**
 * `pnpm demo`: the main job. A release workflow runs durably in a temporary plan folder: a child process starts
 * it, the demo SIGKILLs the child in the middle of a step, then resumes the run here. Completed steps are reused
 * from their checkpoints (the demo says which and why), the interrupted one runs again, the run finishes, and the
 * journal and status are printed. Then the pi extension runs the example workflow inside the real pi CLI against a
 * scripted model (a blocked tool, pi killed and continued with -c, one completion). Runs in about 15 seconds.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { endOfRunMessage, migrateState } from "@phasekit/core";
import { createFsPlanStore, createReporter, runWorkflow, type RunWorkflowOptions } from "@phasekit/adapters-pi";
import { releaseRunBody, seedRepo } from "./release-run.js";
import { releaseRegistry } from "./release-workflow.js";
import { runPiDemo } from "./pi/pi-demo.js";

const SLUG = "release-demo";
const KILL_DURING = "threat-model";

function runOptions(repo: string): RunWorkflowOptions<Record<string, unknown>> {
  return {
    repoRoot: repo,
    target: SLUG,
    toolName: "release-bot",
    workflow: { registry: releaseRegistry(), workflowKey: "release", taskDescription: "Ship v1.2.0" },
    createReporter: () => createReporter({ onChange: () => undefined }),
  };
}

/** Child mode: run until killed, printing one line per step event for the parent to follow. */
async function child(repo: string): Promise<void> {
  const say = (line: string): void => void process.stdout.write(`${line}\n`);
  await runWorkflow(runOptions(repo), async (ctx) => {
    const outputs = await releaseRunBody(ctx, repo, {
      stepDelayMs: 150,
      stepStarted: (id) => say(`started ${id}`),
    });
    return outputs;
  });
}

async function firstAttempt(repo: string): Promise<void> {
  const self = fileURLToPath(import.meta.url);
  const proc = spawn(process.execPath, [...process.execArgv, self, "--child", repo], { stdio: ["ignore", "pipe", "inherit"] });
  console.log(`1. First attempt: child process ${proc.pid} starts the run`);
  let buffer = "";
  let last: string | null = null;
  await new Promise<void>((resolve, reject) => {
    proc.stdout.on("data", (chunk: Buffer) => {
      buffer += chunk.toString("utf8");
      for (let nl = buffer.indexOf("\n"); nl >= 0; nl = buffer.indexOf("\n")) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        const id = line.replace(/^started /, "");
        if (last !== null) console.log(`   ✓ ${last}`);
        last = id;
        if (id === KILL_DURING) {
          console.log(`   … ${id} started — the demo sends SIGKILL now, mid-step`);
          proc.kill("SIGKILL");
        }
      }
    });
    proc.on("exit", (code, signal) => (signal === "SIGKILL" ? resolve() : reject(new Error(`child ended with ${signal ?? code} before the kill`))));
  });
  console.log(`   ✗ child killed (SIGKILL); the run's history (runlog/) and its view workflow.json stay as they were\n`);
}

async function resumeHere(repo: string): Promise<void> {
  console.log("2. Resume in this process (same slug; the dead child's lock is taken over at once: its pid is gone)");
  const result = await runWorkflow(runOptions(repo), (ctx) => releaseRunBody(ctx, repo));
  if (result.status !== "completed") throw new Error(`run ended ${result.status}`);
  for (const step of result.steps) {
    const label = step.outcome === "reused" ? `↺ reused:   ${step.why}` : `▶ ran:      ${step.why}`;
    console.log(`   ${step.stepId.padEnd(17)} ${label}`);
  }
  const effects = readFileSync(path.join(repo, "side-effects.log"), "utf8").trim().split("\n");
  const counts = Object.entries(effects.reduce<Record<string, number>>((m, id) => ((m[id] = (m[id] ?? 0) + 1), m), {}));
  console.log(`   side effects per step: ${counts.map(([id, n]) => `${id}×${n}`).join(", ")}`);
  console.log(`   (${KILL_DURING} shows twice only if the kill landed after its work but before its checkpoint)\n`);
}

async function printJournalAndStatus(repo: string): Promise<void> {
  const store = createFsPlanStore({ repoRoot: repo });
  const journal = await store.readJournal(SLUG);
  if (!journal.ok) throw journal.error;
  console.log(`3. Journal (rendered from the history in ${path.join(store.planRoot, SLUG, "runlog")})`);
  for (const e of journal.entries) {
    const d = (e.data ?? {}) as Record<string, unknown>;
    console.log(`   #${String(e.seq).padStart(2)} gen ${String(e.generation).padStart(2)}  ${e.event.padEnd(28)} ${describeEntry(e.event, d)}`);
  }
  const meta = await store.readMetadata(SLUG);
  await store.close();
  if (!meta.ok || meta.metadata === null) throw new Error("workflow.json missing");
  const state = migrateState(meta.metadata.state);
  console.log(`\n4. Status: run ${SLUG} is ${meta.metadata.status} (generation ${meta.metadata.generation}, last step ${meta.metadata.lastCompletedStepId ?? "-"})`);
  if (state.ok) {
    console.log(`   core workflow: ${state.state.status} after ${state.state.globalStepCount} steps`);
    const message = endOfRunMessage(releaseRegistry(), state.state);
    if (message.ok) console.log(`\n${message.text.replace(/^/gm, "   ")}`);
  }
}

/** One readable line per journal entry: a metadata snapshot's key fields, a core move's from → to, a reuse's step. */
function describeEntry(event: string, d: Record<string, unknown>): string {
  if (event === "metadata") {
    return `status=${String(d.status)} phase=${String(d.phase ?? "-")} step=${String(d.currentStepId ?? "-")} done=${String(d.lastCompletedStepId ?? "-")}`;
  }
  const id = (ref: unknown): string => String((ref as { phaseId?: unknown } | undefined)?.phaseId ?? "end");
  if (event.startsWith("workflow:")) return `${id(d.from)} → ${id(d.to)}`;
  return `${String(d.stepId ?? "")} ${String(d.why ?? d.reason ?? "")}`.trim();
}

if (process.argv[2] === "--child") {
  await child(process.argv[3] as string);
} else {
  const started = Date.now();
  const repo = mkdtempSync(path.join(tmpdir(), "phasekit-demo-"));
  seedRepo(repo);
  console.log(`phasekit demo: a durable release run in ${path.join(repo, "ai_plan", SLUG)}\n`);
  await firstAttempt(repo);
  await resumeHere(repo);
  await printJournalAndStatus(repo);
  console.log("\n5. The pi extension in the real pi CLI (0.73.1, offline: a scripted model on 127.0.0.1)");
  await runPiDemo();
  console.log(`\ndone in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}
