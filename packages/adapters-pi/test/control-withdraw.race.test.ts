/**
 * The withdraw race on the fs and memory stores (PostgreSQL: store-postgres/test/control-withdraw.race.test.ts):
 * after a withdrawal is acknowledged the run does not pause, and a pause the holder took is not withdrawn. On the
 * fs store the two removals also race inside one clear: the withdrawal lands between the holder's read of the
 * file and its rename, and exactly one of them is told it removed the request.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { nodeFs, type FsPort } from "../src/io/fs-port.js";
import { controlFile, newControlRequest, writeControlRequest } from "../src/store/control-signals.js";
import { createFsPlanStore } from "../src/store/plan-store.js";
import { displacedTakeCases, withdrawRaceCases } from "./contract/withdraw-race-cases.js";
import { lockDirOf } from "../src/lock/holder.js";
import { createMemoryPlanStore } from "./helpers/memory-plan-store.js";

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));
const tempRoot = (): string => {
  const d = mkdtempSync(path.join(tmpdir(), "pk-withdraw-"));
  dirs.push(d);
  return d;
};

describe("withdraw race: fs store", () => {
  const fsSetup = async () => {
    const repoRoot = tempRoot();
    // The lock folder gone (a stale-lock breaker took it): the holder notices only when it asks its lock.
    const loseLock = async (slug: string) => rmSync(lockDirOf(path.join(repoRoot, "ai_plan", slug)), { recursive: true, force: true });
    return { store: createFsPlanStore({ repoRoot }), other: createFsPlanStore({ repoRoot }), repoRoot, loseLock };
  };
  withdrawRaceCases(fsSetup);
  displacedTakeCases(fsSetup);

  it("a withdrawal landing inside the holder's clear (after its read, before its rename): only the withdrawal is told it removed the pause", async () => {
    const repoRoot = tempRoot();
    const other = createFsPlanStore({ repoRoot });
    const runDir = path.join(repoRoot, "ai_plan", "run");
    const pause = newControlRequest("pause", "hold on");
    let withdrawal: unknown;
    const racing: FsPort = {
      ...nodeFs,
      rename: async (from, to) => {
        if (withdrawal === undefined && from === controlFile(runDir, "pause")) withdrawal = await other.withdrawControl("run", pause);
        return nodeFs.rename(from, to);
      },
    };
    const holder = createFsPlanStore({ repoRoot, fs: racing });
    mkdirSync(runDir, { recursive: true, mode: 0o700 });
    await writeControlRequest(runDir, pause);
    expect(await holder.clearControl("run", pause)).toEqual({ ok: true, cleared: false });
    expect(withdrawal).toEqual({ ok: true, withdrawn: true });
    expect(await other.readControl("run")).toEqual({ ok: true, request: null });
  });
});

describe("withdraw race: memory store", () => {
  const memorySetup = async () => {
    const store = createMemoryPlanStore();
    return { store, other: store.reopen(), repoRoot: tempRoot(), loseLock: async (slug: string) => store.expireLock(slug) };
  };
  withdrawRaceCases(memorySetup);
  displacedTakeCases(memorySetup);
});
