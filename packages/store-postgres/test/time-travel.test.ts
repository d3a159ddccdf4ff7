/**
 * Time travel on a real PostgreSQL store: `forkRun({ store })` (and `phasekit fork --store`) make a run that
 * reuses exactly the steps before the fork point (its side-effect log shows no repeat) and leave the source's
 * rows as they were; `rerunFrom({ store })` flags the step and every later one (nothing deleted), and the next
 * resume runs exactly those.
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { forkRun, rerunFrom, runWorkflow } from "@phasekit/adapters-pi";
import { main } from "../../adapters-pi/src/cli/main.js";
import { openPostgresPlanStore, type PostgresPlanStore } from "../src/index.js";
import { startCluster } from "./helpers/cluster.js";

const started = startCluster();

if (!started.ok) {
  describe.skip(`time travel on PostgreSQL (SKIPPED: ${started.reason})`, () => it("needs PostgreSQL", () => undefined));
} else {
  const { cluster } = started;
  const namespace = `tt-${randomUUID().slice(0, 8)}`;
  const repoRoot = mkdtempSync(path.join(tmpdir(), "phasekit-pg-tt-"));
  let store: PostgresPlanStore;
  const effects: string[] = [];

  /** Runs (or resumes) the 5-step body on `target`; every step that runs appends its id to `effects`. */
  const run = (target: string) =>
    runWorkflow({ repoRoot, target, toolName: "tt", store, reenter: true }, async (ctx) => {
      let prev = "seed";
      for (const id of ["a", "b", "c", "d", "e"]) {
        prev = await ctx.step(id, { prev }, () => {
          effects.push(id);
          return `${prev}>${id}`;
        });
      }
      return prev;
    });
  const snapshot = async (slug: string) => {
    const meta = await store.readMetadata(slug);
    const records = await (await store.checkpoints(slug, { now: () => new Date() })).records();
    return { meta: meta.ok ? meta.metadata : meta.error, records: [...records].sort((x, y) => x.stepId.localeCompare(y.stepId)) };
  };

  /** `phasekit …args --store <this namespace> --json` in-process; its exit code and parsed stdout. */
  const cliJson = async (args: string[]): Promise<{ code: number; doc: unknown; stderr: string }> => {
    const url = `${cluster.url}${cluster.url.includes("?") ? "&" : "?"}namespace=${namespace}`;
    let stdout = "";
    let stderr = "";
    const io = {
      stdout: { write: (s: string) => (stdout += s) },
      stderr: { write: (s: string) => (stderr += s) },
      stdin: Object.assign((async function* () {})(), { isTTY: false }),
      cwd: repoRoot,
      env: { PI_CODING_AGENT_DIR: "/nonexistent-pi-dir" },
      now: () => new Date(),
    } as Parameters<typeof main>[1];
    const code = await main([...args, "--store", url, "--json"], io);
    return { code, doc: stdout === "" ? null : JSON.parse(stdout), stderr };
  };

  beforeAll(async () => {
    store = await openPostgresPlanStore({ connectionString: cluster.url, namespace });
    expect((await run("src")).status).toBe("completed");
  }, 60_000);

  afterAll(async () => {
    await store?.close();
    cluster.destroy();
  });

  describe("time travel on PostgreSQL", () => {
    it("forkRun reuses exactly the steps before the fork point; the source is untouched", async () => {
      const before = await snapshot("src");
      const fork = await forkRun({ store, target: "src", at: "c", id: "f1" });
      expect(fork).toMatchObject({ slug: "f1", from: { slug: "src", at: "c" }, copied: ["a", "b"] });
      expect(await snapshot("src")).toEqual(before);
      effects.length = 0;
      const resumed = await run("f1");
      expect(resumed).toMatchObject({ status: "completed", result: "seed>a>b>c>d>e" });
      expect(effects).toEqual(["c", "d", "e"]);
      const journal = await store.readJournal("f1");
      expect(journal.ok && journal.entries.some((e) => e.event === "forked")).toBe(true);
      await expect(forkRun({ store, target: "src", at: "c", id: "f1" })).rejects.toMatchObject({ code: "INVALID_OPTIONS", details: { field: "id" } });
      await expect(forkRun({ store, target: "src", at: "zz" })).rejects.toMatchObject({ code: "NOT_FOUND" });
    });

    it("phasekit fork --store makes the fork (a fresh id)", async () => {
      const forked = await cliJson(["fork", "src", "--at", "e"]);
      expect(forked.code, forked.stderr).toBe(0);
      const doc = forked.doc as { id: string; reused: string[] };
      expect(doc.reused).toEqual(["a", "b", "c", "d"]);
      effects.length = 0;
      expect((await run(doc.id)).status).toBe("completed");
      expect(effects).toEqual(["e"]);

    });

    it("rerunFrom flags the step and every later one; the next resume runs exactly them, the one after nothing", async () => {
      await expect(rerunFrom({ store, target: "src", from: "zz" })).rejects.toMatchObject({ code: "NOT_FOUND" });
      const marked = await rerunFrom({ store, target: "src", from: "c", reason: "again" });
      expect(marked).toEqual({ slug: "src", from: "c", keys: ["c", "d", "e"] });
      // Nothing deleted: the records are there, flagged.
      const flagged = (await snapshot("src")).records.filter((r) => r.superseded === true).map((r) => r.stepId);
      expect(flagged).toEqual(["c", "d", "e"]);
      // show --store marks them as the file store's show does.
      const shown = await cliJson(["show", "src"]);
      expect(shown.code, shown.stderr).toBe(0);
      expect((shown.doc as { steps: Array<{ stepId: string; superseded: boolean }> }).steps.map((x) => `${x.stepId}:${x.superseded}`)).toEqual(["a:false", "b:false", "c:true", "d:true", "e:true"]);
      effects.length = 0;
      const again = await run("src");
      expect(again).toMatchObject({ status: "completed", result: "seed>a>b>c>d>e" });
      expect(effects).toEqual(["c", "d", "e"]);
      expect(again.status === "completed" && again.steps.filter((x) => x.outcome === "ran").map((x) => x.outcome === "ran" && x.reason)).toEqual(["superseded", "superseded", "superseded"]);
      effects.length = 0;
      await run("src");
      expect(effects).toEqual([]);
      const journal = await store.readJournal("src");
      expect(journal.ok && journal.entries.some((e) => e.event === "rerun")).toBe(true);
    });
  });
}
