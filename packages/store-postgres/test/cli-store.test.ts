/**
 * `--store postgres://…` (and PHASEKIT_STORE): the phasekit commands and the inspector on runs kept in a real
 * PostgreSQL, the same views and actions as on a plan folder. Runs are made with runWorkflow through the store;
 * the CLI runs in this process (`main`) against a URL, so it opens its own store, as a user's shell would.
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runWorkflow, type RunResult } from "@phasekit/adapters-pi";
import { main } from "../../adapters-pi/src/cli/main.js";
import { startInspector } from "../../adapters-pi/src/cli/ui-server.js";
import { openPostgresPlanStore, type PostgresPlanStore } from "../src/index.js";
import { startCluster } from "./helpers/cluster.js";

const started = startCluster();

async function cli(args: string[], env: Record<string, string> = {}, input = ""): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const code = await main(args, {
    stdout: { write: (s: string) => (stdout += s) },
    stderr: { write: (s: string) => (stderr += s) },
    stdin: Object.assign(
      (async function* () {
        yield input;
      })(),
      { isTTY: false },
    ),
    cwd: process.cwd(),
    env: { PI_CODING_AGENT_DIR: "/nonexistent-pi-dir", ...env },
    now: () => new Date(),
  } as Parameters<typeof main>[1]);
  return { code, stdout, stderr };
}

if (!started.ok) {
  describe.skip(`phasekit --store postgres (SKIPPED: ${started.reason})`, () => it("needs PostgreSQL", () => undefined));
} else {
  const { cluster } = started;
  const namespace = `cli-${randomUUID().slice(0, 8)}`;
  const url = `${cluster.url}${cluster.url.includes("?") ? "&" : "?"}namespace=${namespace}`;
  const repoRoot = mkdtempSync(path.join(tmpdir(), "phasekit-pg-cli-"));
  let store: PostgresPlanStore;
  let release: () => void = () => undefined;
  let live: Promise<RunResult<string>>;
  let liveStarted: Promise<void>;
  const pg = (...args: string[]) => cli([...args, "--store", url, "--repo", repoRoot]);

  beforeAll(async () => {
    store = await openPostgresPlanStore({ connectionString: cluster.url, namespace });
    await runWorkflow({ repoRoot, target: "done-1", toolName: "builder", store }, async (ctx) => {
      await ctx.step("plan", { issue: 1 }, () => ({ files: ["a.ts"] }));
      await ctx.step("apply", { n: 2 }, () => "applied");
      return "ok";
    });
    await runWorkflow({ repoRoot, target: "failed-1", toolName: "builder", store }, async () => {
      throw new Error("boom");
    }).catch(() => undefined);
    let started!: () => void;
    liveStarted = new Promise((r) => (started = r));
    const gate = new Promise<void>((r) => (release = r));
    live = runWorkflow({ repoRoot, target: "live-1", toolName: "builder", store }, async (ctx) => {
      await ctx.step("first", {}, async () => {
        started();
        await gate;
        return 1;
      });
      await ctx.step("second", {}, () => 2);
      return "done";
    });
    await liveStarted;
  }, 60_000);

  afterAll(async () => {
    release();
    await live?.catch(() => undefined);
    await store?.close();
    cluster.destroy();
  });

  describe("phasekit --store postgres://…", () => {
    it("list shows the store's runs: status, tool, last step, and the live run's lease holder", async () => {
      const r = await pg("list", "--json");
      expect(r.code, r.stderr).toBe(0);
      const runs = (JSON.parse(r.stdout) as { runs: Array<{ id: string; status: string; ownerTool: string; lastStep: string | null; currentStep: string | null; lockHolder: string | null; runDir: string }> }).runs;
      const byId = new Map(runs.map((x) => [x.id, x]));
      expect(byId.get("done-1")).toMatchObject({ status: "completed", ownerTool: "builder", lastStep: "apply", lockHolder: null, runDir: `postgres:${namespace}/done-1` });
      expect(byId.get("failed-1")).toMatchObject({ status: "failed" });
      expect(byId.get("live-1")).toMatchObject({ status: "running", currentStep: "first" });
      // The lease names the holder's machine as the fs lock's holder file does (one wording: describeOwner).
      const lease = await store.readLease?.("live-1");
      expect(byId.get("live-1")?.lockHolder).toBe(`tool builder (pid ${process.pid} on host ${hostname()}), lease until ${lease?.until}`);
      const text = await pg("list");
      expect(text.stdout).toMatch(/done-1\s+completed\s+builder/);
    });

    it("PHASEKIT_STORE names the store when --store is not given; an empty one means the plan folder", async () => {
      const r = await cli(["list", "--json", "--repo", repoRoot], { PHASEKIT_STORE: url });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain("done-1");
      const folder = await cli(["list", "--json", "--repo", repoRoot], { PHASEKIT_STORE: "" });
      expect(folder.stdout).not.toContain("done-1");
    });

    it("show, show --step, why, journal and state show read the run from the store", async () => {
      const show = await pg("show", "done-1", "--json");
      expect(show.code, show.stderr).toBe(0);
      const doc = JSON.parse(show.stdout) as { summary: { status: string }; steps: Array<{ stepId: string; status: string }> };
      expect(doc.summary.status).toBe("completed");
      expect(doc.steps.map((s) => [s.stepId, s.status])).toEqual([["plan", "completed"], ["apply", "completed"]]);
      const inFlight = JSON.parse((await pg("show", "live-1", "--json")).stdout) as { steps: Array<{ stepId: string; status: string }> };
      expect(inFlight.steps).toEqual([expect.objectContaining({ stepId: "first", status: "in-flight" })]);

      const step = await pg("show", "done-1", "--step", "plan", "--json");
      expect(step.code, step.stderr).toBe(0);
      expect((JSON.parse(step.stdout) as { output: { value: unknown } }).output.value).toEqual({ files: ["a.ts"] });

      const why = await pg("why", "done-1", "plan", "--input", JSON.stringify({ issue: 1 }), "--json");
      expect(why.code, why.stderr).toBe(0);
      expect(JSON.parse(why.stdout)).toMatchObject({ decision: "reuse", reason: "same-input" });
      const changed = JSON.parse((await pg("why", "done-1", "plan", "--input", "{}", "--json")).stdout) as { reason: string };
      expect(changed.reason).toBe("input-changed");

      const journal = await pg("journal", "done-1");
      expect(journal.code, journal.stderr).toBe(0);
      expect(journal.stdout.trim().split("\n").length).toBeGreaterThan(1);

      const state = await pg("state", "show", "done-1");
      expect(JSON.parse(state.stdout)).toMatchObject({ slug: "done-1", status: "completed" });
    });

    it("a run the store does not hold is NOT_FOUND (exit 3); a path is not a run id there; rm and inspect say they need a plan folder", async () => {
      const missing = await pg("show", "nope-1");
      expect(missing.code).toBe(3);
      expect(missing.stderr).toContain(`no run "nope-1" in postgres:${namespace}`);
      expect((await pg("show", "../x")).code).toBe(1);
      const rm = await pg("rm", "done-1");
      expect([rm.code, rm.stderr]).toEqual([2, expect.stringContaining("works on plan folders only")]);
      expect((await pg("inspect", "done-1", "--tool", "x")).code).toBe(2);
      // (fork and rerun work on the store: store-postgres/test/time-travel.test.ts; resume-due too:
      // resume-due-store.int.test.ts)
    });

    it("a malformed URL, or --store with --plan-root, is bad usage (exit 2) and never echoes the password", async () => {
      const bad = await cli(["list", "--store", "mysql://u:secret@h/db"]);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain("mysql:");
      expect(bad.stderr).not.toContain("secret");
      expect((await cli(["list", "--store", url, "--plan-root", "/tmp"])).code).toBe(2);
    });

    it("resume withdraws a pending pause of a run another process holds (a withdrawal is not the holder's clear)", async () => {
      expect((await pg("pause", "live-1", "by", "mistake")).code).toBe(0);
      const r = await pg("resume", "live-1", "--json");
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ id: "live-1", action: "resume", withdrawn: { signal: "pause", reason: "by mistake" } });
      expect(await store.readControl("live-1", "pause")).toEqual({ ok: true, request: null });
      // Nothing pending any more: a second resume says so.
      const again = await pg("resume", "live-1");
      expect(again.code).not.toBe(0);
      expect(again.stderr).toContain("has no pending pause");
    });

    it("pause from the CLI reaches the live run through the store: it ends paused after the step in flight", async () => {
      const r = await pg("pause", "live-1", "deploy", "freeze");
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain("pause requested for run live-1: deploy freeze");
      const pending = JSON.parse((await pg("show", "live-1", "--json")).stdout) as { pending: { signal: string } | null };
      expect(pending.pending?.signal).toBe("pause");
      release();
      const result = await live;
      expect(result.status).toBe("paused");
      expect(JSON.parse((await pg("list", "--json")).stdout).runs.find((x: { id: string }) => x.id === "live-1")).toMatchObject({ status: "paused", lockHolder: null });
    });

    it("cancel ends a paused run cancelled under its lease; approve files a decision; stop of a finished run is refused", async () => {
      const cancel = await pg("cancel", "live-1", "not", "needed");
      expect(cancel.code, cancel.stderr).toBe(0);
      const m = await store.readMetadata("live-1");
      expect(m.ok && m.metadata).toMatchObject({ status: "cancelled", failureReason: "not needed", currentTool: "phasekit-cli" });
      const stop = await pg("stop", "done-1");
      expect(stop.code).toBe(1);
      expect(stop.stderr).toContain("completed");
      await runWorkflow({ repoRoot, target: "waits-1", toolName: "builder", store }, async (ctx) => {
        await ctx.step("a", {}, () => 1);
        return "x";
      });
      const approve = await pg("approve", "failed-1", "--data", '{"ok":true}', "looks", "good");
      expect(approve.code, approve.stderr).toBe(0);
      const filed = await store.readControl("failed-1", "approve");
      expect(filed.ok && filed.request).toMatchObject({ signal: "approve", reason: "looks good" });
    });

    it("state set stores an edited state under the run's lease, compare-and-set on its generation", async () => {
      const shown = JSON.parse((await pg("state", "show", "waits-1")).stdout) as { phase?: string; generation: number };
      const edited = JSON.stringify({ ...shown, phase: "reviewed by hand" });
      const set = await cli(["state", "set", "waits-1", "--store", url, "--repo", repoRoot], {}, edited);
      expect(set.code, set.stderr).toBe(0);
      expect(set.stdout).toContain(`state stored (generation ${shown.generation + 1})`);
      const m = await store.readMetadata("waits-1");
      expect(m.ok && m.metadata).toMatchObject({ phase: "reviewed by hand", currentTool: "phasekit-cli", generation: shown.generation + 1 });
      // The same document again is stale: its generation was taken.
      expect((await cli(["state", "set", "waits-1", "--store", url, "--repo", repoRoot], {}, edited)).code).toBe(1);
    });

    it("the inspector lists and shows the store's runs, with step outputs", async () => {
      const inspector = await startInspector({ roots: { repoRoot, store: { kind: "postgres", connectionString: cluster.url, namespace, label: `postgres:${namespace}` } }, defDirs: [], port: 0 });
      try {
        const get = async (p: string) => {
          const res = await fetch(`${inspector.origin}${p}`, { headers: { "x-phasekit-token": inspector.token } });
          return { status: res.status, body: (await res.json()) as Record<string, unknown> };
        };
        const runs = await get("api/runs");
        expect(runs.status).toBe(200);
        expect((runs.body["runs"] as Array<{ id: string }>).map((x) => x.id)).toEqual(expect.arrayContaining(["done-1", "failed-1", "live-1"]));
        const page = await get("api/runs/done-1");
        expect(page.status).toBe(200);
        expect((page.body["steps"] as Array<{ stepId: string; verdict: { decision: string } }>).map((s) => [s.stepId, s.verdict.decision])).toEqual([
          ["plan", "reuse-if-same-input"],
          ["apply", "reuse-if-same-input"],
        ]);
        expect((page.body["journal"] as unknown[]).length).toBeGreaterThan(1);
        const out = await get("api/runs/done-1/steps/apply/output");
        expect(out.body["output"]).toMatchObject({ ok: true, text: '"applied"\n' });
        expect((await get("api/runs/nope-1")).status).toBe(404);
        // The run page's change stream: the store's runSignature, one statement per look.
        const res = await fetch(`${inspector.origin}api/runs/done-1/events`, { headers: { "x-phasekit-token": inspector.token } });
        const reader = (res.body as ReadableStream<Uint8Array>).getReader();
        let seen = "";
        const until = async (text: string) => {
          while (!seen.includes(text)) {
            const chunk = await reader.read();
            if (chunk.done) throw new Error(`stream ended before ${JSON.stringify(text)}: ${seen}`);
            seen += new TextDecoder().decode(chunk.value);
          }
        };
        await until(": watching");
        expect(await store.appendJournal("done-1", { generation: 1, at: new Date().toISOString(), event: "note" })).toMatchObject({ ok: true });
        await until("event: changed");
        await reader.cancel();
      } finally {
        await inspector.close();
        const { closeStores } = await import("../../adapters-pi/src/cli/store-runs.js");
        await closeStores();
      }
    });

    it("gc --keep 1 removes the store's older finished runs and keeps the newest", async () => {
      const r = await pg("gc", "--keep", "1", "--json");
      expect(r.code, r.stderr).toBe(0);
      const report = JSON.parse(r.stdout) as { removed: Array<{ slug: string }> };
      expect(report.removed.map((x) => x.slug).sort()).toEqual(["done-1", "failed-1", "live-1"]);
      expect((await pg("show", "done-1")).code).toBe(3);
      expect((await pg("show", "waits-1")).code).toBe(0);
    });
  });
}
