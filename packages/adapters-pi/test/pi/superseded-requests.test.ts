/**
 * The pi extension sees a run's requests as runWorkflow's runner does (run/control-requests.ts `controlForRun`):
 * a pause its filer stamped before the run's last end (it read the run running, and its write landed after that
 * end had cleared the pauses) is superseded, never honoured, so it cannot pause the run's resume. However the
 * resume takes the run: the session that paused it (its hold goes on), a new session's `/workflow-resume <id>`,
 * or a new session's claim of the run its session entries hold. Before, pi read the store's requests as they
 * were, and the resumed run was paused at its next workflow_step by a pause meant for the life that had ended.
 * A pause filed after the resume (stamped with the resumed run's generation) still pauses it.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it, vi } from "vitest";
import { resultText, type FakePi } from "./helpers/fake-pi.js";
import { loadExtension, useTempProject, WAIT, WITH_PLANS } from "./helpers/setup.js";
import { createFsPlanStore } from "../../src/store/plan-store.js";
import { controlFile, newControlRequest, writeControlRequest } from "../../src/store/control-signals.js";

const project = useTempProject();
const ID = "run00001";
const runDir = () => path.join(project.cwd, "plans", ID);
const meta = () => JSON.parse(fs.readFileSync(path.join(runDir(), "workflow.json"), "utf8")) as { status: string; generation: number; state: { currentPath: Array<{ phaseIndex: number }> } };
const place = () => meta().state.currentPath.map((s) => s.phaseIndex);

/** `phasekit pause`'s library call, from outside the session. */
async function filePause(reason: string): Promise<void> {
  const store = createFsPlanStore({ repoRoot: project.cwd, planRoot: "plans" });
  try {
    const r = await store.requestControl(ID, "pause", { reason });
    if (!r.ok) throw r.error;
  } finally {
    await store.close();
  }
}

/** A session that starts the run and is paused from outside at its first step; `late` files the late pause. */
async function pausedRun(): Promise<{ pi: FakePi; late: () => Promise<void> }> {
  const { pi } = loadExtension(project, WITH_PLANS);
  await pi.emit("session_start", {});
  await pi.command("workflow", "ship Add a flag");
  const seen = meta().generation;
  await filePause("first pause");
  expect(resultText(await pi.step({ action: "next" }))).toMatch(/paused/iu);
  expect(meta().status).toBe("paused");
  expect(meta().generation).toBeGreaterThan(seen);
  // Its filer read the run running at `seen` (so the store accepted it); its write lands after the paused end,
  // once the resuming session holds the run (each take writes the paused state again, clearing what is there).
  const late = () => writeControlRequest(runDir(), newControlRequest("pause", "late pause", undefined, seen));
  return { pi, late };
}

type Resume = (paused: FakePi, late: () => Promise<void>) => Promise<FakePi>;

const RESUMES: Array<[string, Resume]> = [
  [
    "resumed in the session that paused it",
    async (pi, late) => {
      await late();
      await pi.command("workflow-resume", "");
      return pi;
    },
  ],
  [
    "taken by a new session's /workflow-resume <id>",
    async (paused, late) => {
      await paused.emit("session_shutdown", {});
      const { pi } = loadExtension(project, WITH_PLANS);
      await pi.emit("session_start", {});
      await pi.command("workflow-resume", ID);
      await late();
      await pi.command("workflow-resume", "");
      return pi;
    },
  ],
  [
    "claimed by a new session from its session entries",
    async (paused, late) => {
      await paused.emit("session_shutdown", {});
      const before = meta().generation;
      const { pi } = loadExtension(project, { ...WITH_PLANS, branch: [...paused.branch] });
      await pi.emit("session_start", { reason: "startup" });
      // The claim runs in the background; it has the run once it wrote the paused state again.
      await vi.waitFor(() => expect(meta().generation).toBeGreaterThan(before), WAIT);
      await late();
      await pi.command("workflow-resume", "");
      return pi;
    },
  ],
];

describe("pi: a pause stamped before the run's paused end does not pause its resume", () => {
  it.each(RESUMES)("%s", async (_name, resume) => {
    const { pi: paused, late } = await pausedRun();
    const pi = await resume(paused, late);
    expect(meta().status).toBe("running");
    const r = resultText(await pi.step({ action: "next" }));
    expect(r).not.toMatch(/late pause|paused/iu);
    expect(meta().status).toBe("running");
    expect(place()).toEqual([1, 0]);
    expect(fs.existsSync(controlFile(runDir(), "pause"))).toBe(false);

    // A pause filed for the resumed run is its own: it pauses it.
    await filePause("after the resume");
    expect(resultText(await pi.step({ action: "next" }))).toMatch(/paused/iu);
    expect(meta().status).toBe("paused");
    await pi.emit("session_shutdown", {});
  });
});
