/**
 * Real pi CLI, both hosts: a pi run marked (as `phasekit rerun` did before it refused phasekit's own history
 * entries, all a pi run's history holds) while no session holds it, taken over by another
 * session (`/workflow-resume`) and cancelled there (`/cancel-workflow`) spends its marks at that end, as a
 * runWorkflow run does: `phasekit rm --dry-run` would remove it. Before, it refused: the run "waits for a rerun"
 * no session would ever carry out. (Every pi end path is in rerun-spent.test.ts, with the typed fake host.)
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { PiHost } from "../../../../examples/pi/pi-process.js";
import { HOSTS } from "./hosts.js";
import { e2eProject, until } from "./e2e/project.js";
import { phasekit } from "../cli/helpers/run-cli.js";
import { readRunLog } from "../../src/store/run-log/reader.js";
import { writeLegacyMark } from "../helpers/legacy-rerun-mark.js";

/** The keys of the run's history, as `phasekit show` reads them (no lock, nothing written). */
async function historyKeys(runDir: string): Promise<string[]> {
  const view = await readRunLog(runDir);
  if (view === null) return [];
  try {
    return view.entries().map((e) => e.key);
  } finally {
    view.close();
  }
}

describe.each(HOSTS)("pi $name (real CLI): a marked run's end spends its rerun marks", ({ get }) => {
  let host: PiHost;
  beforeAll(() => {
    host = get();
  }, 300_000);

  it("rerun while no session holds it, /workflow-resume in another session, /cancel-workflow: rm would remove it", async () => {
    const p = await e2eProject(host, "rerun-spent");
    try {
      p.model.fallback = { text: "Waiting for you." };
      p.model.push({ text: "Planning." });
      let pi = p.start();
      pi.send({ type: "prompt", message: "/workflow ship Add a flag" });
      await pi.waitFor((l) => l["type"] === "agent_end", 20_000, "the first agent run's end");
      const plans = path.join(p.cwd, "ai_plan");
      const id = fs.readdirSync(plans)[0] as string;
      const runDir = path.join(plans, id);
      await until(() => fs.existsSync(path.join(runDir, "runlog")), "the run's history");
      await pi.kill("SIGKILL");

      // A pi run's history holds phasekit's own entries only: `phasekit rerun` refuses them now, and a mark an
      // earlier version wrote over them (every key from the first) is what such a run still carries.
      const keys = await historyKeys(runDir);
      const rerun = phasekit(["--repo", p.cwd, "rerun", id, "--from", keys[0] as string]);
      expect(rerun.code).not.toBe(0);
      expect(rerun.stderr).toContain("not a step of the run");
      await writeLegacyMark(runDir, keys);

      pi = p.start({ sessionDir: path.join(p.root, "sessions-b") });
      p.model.push({ text: "Resumed." });
      pi.send({ type: "prompt", message: `/workflow-resume ${id}` });
      await pi.waitFor((l) => l["type"] === "agent_end", 20_000, "the resumed agent run's end");
      pi.send({ type: "prompt", message: "/cancel-workflow" });
      const status = () => (JSON.parse(fs.readFileSync(path.join(runDir, "workflow.json"), "utf8")) as { status: string }).status;
      await until(() => status() === "cancelled" && !fs.existsSync(path.join(runDir, ".lock")), "the run cancelled and its lock let go");

      const rm = phasekit(["--repo", p.cwd, "rm", id, "--dry-run"]);
      expect(rm.stderr).toBe("");
      expect(rm.stdout).toContain(`would remove run ${id} (cancelled`);
      expect(rm.code).toBe(0);
    } finally {
      await p.close();
    }
  }, 90_000);
});
