/**
 * Real pi CLI, both hosts: with `PHASEKIT_STORE=postgres://…` the default extension keeps its durable runs in
 * PostgreSQL (loading @phasekit/store-postgres only then), and `phasekit pause <run> --store …` from another
 * terminal pauses the run pi drives, exactly as with a plan folder (control-requests.int.test.ts in
 * adapters-pi). No plan folder is written.
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { PiHost } from "../../../examples/pi/pi-process.js";
import { HOSTS } from "../../adapters-pi/test/pi/hosts.js";
import { e2eProject, notices, until } from "../../adapters-pi/test/pi/e2e/project.js";
import { startCluster } from "./helpers/cluster.js";
import { storeSetup } from "./helpers/stores.js";

const BIN = path.join(import.meta.dirname, "..", "..", "adapters-pi", "bin", "phasekit.js");
const started = startCluster();

if (!started.ok) {
  describe.skip(`pi with PHASEKIT_STORE (SKIPPED: ${started.reason})`, () => it("needs PostgreSQL", () => undefined));
} else {
  const { cluster } = started;
  const { open } = storeSetup(cluster);

  describe.each(HOSTS)("pi $name with PHASEKIT_STORE=postgres://…", ({ name, get }) => {
    let host: PiHost;
    beforeAll(() => {
      host = get();
    }, 300_000);

    it("the run lives in PostgreSQL; phasekit pause --store pauses it at the next step; no plan folder is written", async () => {
      const namespace = `pi-${name.replace(/\W/g, "")}`;
      const url = `${cluster.url}?namespace=${namespace}`;
      const store = await open(namespace);
      const status = async (id: string): Promise<string | undefined> => {
        const m = await store.readMetadata(id);
        return m.ok ? m.metadata?.status : undefined;
      };
      const p = await e2eProject(host, "pg-pi");
      try {
        p.model.push({ text: "planning" });
        const pi = p.start({ env: { PHASEKIT_STORE: url } });
        pi.send({ type: "prompt", message: "/workflow ship Add a flag" });
        await pi.waitFor((l) => l["type"] === "agent_end", 20_000, "the first agent run's end");
        let id = "";
        for (let i = 0; i < 100 && id === ""; i++) {
          id = (await store.list()).find((e) => e.ok && e.metadata?.status === "running")?.slug ?? "";
          if (id === "") await new Promise((r) => setTimeout(r, 100));
        }
        expect(id, "a running run in PostgreSQL").not.toBe("");
        expect(p.lastState()?.["taskId"]).toBe(id);
        expect(fs.existsSync(path.join(p.cwd, "ai_plan"))).toBe(false);

        const listed = JSON.parse(execFileSync(process.execPath, [BIN, "list", "--json", "--store", url], { cwd: p.cwd, encoding: "utf8" })) as { runs: Array<{ id: string; status: string; lockHolder: string | null }> };
        expect(listed.runs.find((r) => r.id === id)).toMatchObject({ status: "running", lockHolder: expect.stringMatching(/^tool pi /) });

        execFileSync(process.execPath, [BIN, "pause", id, "lunch"], { cwd: p.cwd, encoding: "utf8", env: { ...process.env, PHASEKIT_STORE: url } });
        p.model.push({ tool: "workflow_step", args: { action: "next" } }, { text: "waiting" });
        pi.send({ type: "prompt", message: "Go on." });
        await until(() => p.lastState()?.["status"] === "paused", "the run paused in the session");
        let stored: string | undefined;
        for (let i = 0; i < 100 && stored !== "paused"; i++) {
          stored = await status(id);
          if (stored !== "paused") await new Promise((r) => setTimeout(r, 100));
        }
        expect(stored).toBe("paused");
        await until(() => notices(pi).join("\n").includes("paused from outside this session (lunch)"), "the pause notice");
        const pending = await store.readControl(id);
        expect(pending.ok && pending.request).toBe(null);
      } finally {
        await p.close();
      }
    }, 60_000);
  });
}
