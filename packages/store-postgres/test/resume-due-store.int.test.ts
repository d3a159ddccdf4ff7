/**
 * `phasekit resume-due --store postgres://…` with real processes and a real PostgreSQL: a run killed while it
 * sleeps is listed once its sleep is over and its lease has run out (not while a live process holds it), and
 * `--exec` runs a command for it; a run killed while it waits for an approval is listed once a decision is filed.
 */
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { phasekitInProcess } from "../../adapters-pi/test/cli/helpers/run-cli.js";
import { startCluster } from "./helpers/cluster.js";
import { storeSetup } from "./helpers/stores.js";

const WAITER = fileURLToPath(new URL("./helpers/pg-waiter.ts", import.meta.url));
const REPO = fileURLToPath(new URL("../../../", import.meta.url));
const started = startCluster();

/** The phasekit CLI in this process (it opens its own store from the URL, as a user's shell would). */
const cli = (args: string[]) => phasekitInProcess(args);

/** Starts a waiter, waits until it is inside its wait, and SIGKILLs it. */
async function killedWhileWaiting(url: string, namespace: string, slug: string, mode: "sleep" | "approval", ms: number): Promise<void> {
  const proc = spawn(process.execPath, ["--import", "tsx", "--conditions=@phasekit/source", WAITER, url, namespace, slug, mode, String(ms), "60000"], { cwd: REPO, stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  proc.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<void>((resolve) => proc.on("exit", () => resolve()));
  await new Promise<void>((resolve, reject) => {
    let buf = "";
    proc.stdout.on("data", (d: Buffer) => {
      buf += d.toString();
      if (buf.includes('"ev":"waiting"')) resolve();
    });
    proc.on("exit", () => reject(new Error(`the waiter ended before it waited: ${stderr}`)));
  });
  proc.kill("SIGKILL");
  await exited;
}

if (!started.ok) {
  describe.skip(`resume-due --store (SKIPPED: ${started.reason})`, () => it("needs PostgreSQL", () => undefined));
} else {
  const { cluster } = started;
  const { expire } = storeSetup(cluster, { adminMax: 1 });

  describe("phasekit resume-due --store", () => {
    it("lists a killed sleeper once its lease has run out and its sleep is over; --exec runs for it; a filed decision ends an approval wait", async () => {
      const namespace = `due-${randomUUID().slice(0, 8)}`;
      const url = `${cluster.url}${cluster.url.includes("?") ? "&" : "?"}namespace=${namespace}`;
      const repoRoot = mkdtempSync(path.join(tmpdir(), "phasekit-pg-due-"));
      const due = async () => {
        const r = await cli(["--json", "resume-due", "--store", url, "--repo", repoRoot]);
        expect(r.code, r.stderr).toBe(0);
        return (JSON.parse(r.stdout) as { due: Array<{ id: string; wait: string; why: string }> }).due;
      };
      // A long sleep (the kill always lands inside it) whose due time, by the waiter's clock an hour behind, is over.
      await killedWhileWaiting(cluster.url, namespace, "sleeper", "sleep", 60_000);
      await killedWhileWaiting(cluster.url, namespace, "asker", "approval", 0);
      // The killed holders' leases (60 s) still look live: nobody is listed while a live process may hold a run.
      expect(await due()).toEqual([]);
      await expire(namespace);
      expect(await due()).toEqual([expect.objectContaining({ id: "sleeper", wait: "sleep", why: "its sleep is over" })]);
      const filed = await cli(["approve", "asker", "--name", "ship", "--store", url, "--repo", repoRoot]);
      expect(filed.code, filed.stderr).toBe(0);
      expect((await due()).map((d) => [d.id, d.why])).toEqual(expect.arrayContaining([["sleeper", "its sleep is over"], ["asker", "a decision was filed"]]));
      const out = path.join(repoRoot, "resumed.txt");
      const r = await cli(["resume-due", "--store", url, "--repo", repoRoot, "--exec", `node -e "require('fs').appendFileSync(process.argv[1], process.env.PHASEKIT_RUN_ID + ' ')" ${JSON.stringify(out)}`]);
      expect(r.code, r.stderr).toBe(0);
      expect(readFileSync(out, "utf8").trim().split(" ").sort()).toEqual(["asker", "sleeper"]);
    }, 60_000);
  });
}
