/**
 * The pi extension when the store fails around a control request (durable-control.ts): a request that cannot be
 * read or taken is told to the user once per failing stretch, naming the error, and the session goes on; a request that was
 * honoured but could not be cleared, or whose journal line could not be written, is a warning, not dropped.
 */
import { describe, expect, it } from "vitest";
import { workflowError, type WorkflowError } from "@phasekit/core";
import { loadExtension, useTempProject } from "./helpers/setup.js";
import { resultText } from "./helpers/fake-pi.js";
import { createMemoryPlanStore } from "../helpers/memory-plan-store.js";
import type { PlanStore } from "../../src/store/plan-store.js";
import { storeWithLeaseStores } from "./helpers/lease-store.js";

const project = useTempProject();

/** What the store does wrong now: each fault is read at the call, so a test turns it on and off. */
interface Faults {
  read?: { error: WorkflowError; thrown: boolean };
  clear?: WorkflowError;
  journal?: WorkflowError;
}

/** The extension's store over `mem`, its lease's writes included, failing as `faults` says. */
function faultyStore(mem: ReturnType<typeof createMemoryPlanStore>, faults: Faults): (cwd: string) => PlanStore {
  const faulty = (s: PlanStore): PlanStore =>
    Object.create(s, {
      readControl: {
        value: async (...args: Parameters<PlanStore["readControl"]>) => {
          if (faults.read?.thrown) throw faults.read.error;
          return faults.read === undefined ? s.readControl(...args) : { ok: false, error: faults.read.error };
        },
      },
      clearControl: { value: async (...args: Parameters<PlanStore["clearControl"]>) => (faults.clear === undefined ? s.clearControl(...args) : { ok: false, error: faults.clear }) },
      appendJournal: {
        value: async (...args: Parameters<PlanStore["appendJournal"]>) => {
          if (faults.journal !== undefined && args[1].event.startsWith("control-")) throw faults.journal;
          return s.appendJournal(...args);
        },
      },
    }) as PlanStore;
  return storeWithLeaseStores(mem, faulty(mem), faulty);
}

async function started(faults: Faults) {
  const mem = createMemoryPlanStore();
  const other = mem.reopen();
  const { pi } = loadExtension(project, { options: { planRoot: "plans", store: faultyStore(mem, faults) } });
  await pi.emit("session_start", {});
  await pi.command("workflow", "ship Add a flag");
  return { pi, other };
}

describe("pi: the store fails around a control request", () => {
  it("a request that cannot be read: told once per failing stretch, naming the error; the session goes on, and the request is honoured once it can be read", async () => {
    const faults: Faults = { read: { error: workflowError("store", "READ_FAILED", "EIO: i/o error, read", { hint: "check the disk" }), thrown: false } };
    const { pi, other } = await started(faults);
    expect((await other.requestControl("run00001", "pause", { reason: "lunch" })).ok).toBe(true);

    await pi.step({ action: "status" });
    await pi.emit("before_agent_start", { prompt: "go on" });
    const moved = resultText(await pi.step({ action: "next" }));
    expect(moved).not.toMatch(/paused/i);
    const told = pi.notices.filter((n) => n.text.includes("EIO"));
    expect(told).toHaveLength(1);
    expect(told[0]).toMatchObject({ level: "warning" });
    expect(told[0]?.text).toContain("[READ_FAILED]");
    expect(told[0]?.text).toContain("run run00001");
    expect(told[0]?.text).toContain("check the disk");

    faults.read = undefined;
    expect(resultText(await pi.step({ action: "status" }))).toContain("paused the workflow from outside this session");

    // A new failing stretch is news again: told once more, a thrown error as well as a refused read.
    faults.read = { error: workflowError("store", "READ_FAILED", "ECONNRESET: the store went away"), thrown: true };
    await pi.emit("before_agent_start", { prompt: "and now?" });
    await pi.step({ action: "status" });
    expect(pi.notices.filter((n) => n.text.includes("ECONNRESET"))).toHaveLength(1);
    await pi.emit("session_shutdown", {});
  });

  it("a pause that cannot be taken (the store refuses its clear): told once, naming the error; the session goes on, and it pauses once the store works", async () => {
    const faults: Faults = { clear: workflowError("store", "WRITE_FAILED", "EROFS: read-only file system, unlink") };
    const { pi, other } = await started(faults);
    expect((await other.requestControl("run00001", "pause", { reason: "lunch" })).ok).toBe(true);

    await pi.step({ action: "status" });
    await pi.emit("before_agent_start", { prompt: "go on" });
    expect(resultText(await pi.step({ action: "next" }))).not.toMatch(/paused/i);
    const told = pi.notices.filter((n) => n.text.includes("EROFS"));
    expect(told).toHaveLength(1);
    expect(told[0]).toMatchObject({ level: "warning" });
    expect(told[0]?.text).toContain("could not take the pause request");
    expect(told[0]?.text).toContain("[WRITE_FAILED]");

    faults.clear = undefined;
    expect(resultText(await pi.step({ action: "status" }))).toContain("paused the workflow from outside this session");
    await pi.emit("session_shutdown", {});
  });

  it("a take that failed, then the pause withdrawn: once the store worked again, a later failing stretch of reads is told once more", async () => {
    const faults: Faults = { clear: workflowError("store", "WRITE_FAILED", "EROFS: read-only file system, unlink") };
    const { pi, other } = await started(faults);
    const filed = await other.requestControl("run00001", "pause", { reason: "lunch" });
    expect(filed.ok).toBe(true);
    await pi.step({ action: "status" });
    expect(pi.notices.filter((n) => n.text.includes("EROFS"))).toHaveLength(1);
    // The filer takes the pause back, and the store works again: the take is never tried again, the reads succeed.
    if (filed.ok) expect(await other.withdrawControl("run00001", filed.request)).toMatchObject({ ok: true, withdrawn: true });
    faults.clear = undefined;
    await pi.step({ action: "status" });

    faults.read = { error: workflowError("store", "READ_FAILED", "EIO: i/o error, read"), thrown: false };
    expect((await other.requestControl("run00001", "stop", { reason: "wrong task" })).ok).toBe(true);
    await pi.step({ action: "status" });
    await pi.emit("before_agent_start", { prompt: "go on" });
    await pi.step({ action: "status" });
    const told = pi.notices.filter((n) => n.text.includes("EIO"));
    expect(told).toHaveLength(1);
    expect(told[0]?.text).toContain("could not read the pause, stop and approve requests");
    await pi.emit("session_shutdown", {});
  });

  // A stop is not taken (cleared) before it is acted on, as a pause is (control-requests.ts): it is cleared after.
  const afterHonoured = [
    { what: "an honoured request that could not be cleared: a warning naming the error, the run stopped all the same", faults: { clear: workflowError("store", "WRITE_FAILED", "EACCES: permission denied, unlink") }, errno: "EACCES", said: "could not clear the stop request" },
    { what: "an honoured request whose journal line could not be written: a warning naming the error, not dropped", faults: { journal: workflowError("store", "WRITE_FAILED", "ENOSPC: no space left on device, write") }, errno: "ENOSPC", said: "could not journal the stop request" },
  ];
  for (const c of afterHonoured) {
    it(c.what, async () => {
      const { pi, other } = await started(c.faults);
      expect((await other.requestControl("run00001", "stop", { reason: "wrong task" })).ok).toBe(true);

      expect(resultText(await pi.step({ action: "next" }))).toContain("it is cancelled");
      const told = pi.notices.find((n) => n.text.includes(c.errno));
      expect(told).toMatchObject({ level: "warning" });
      expect(told?.text).toContain(c.said);
      expect(told?.text).toContain("[WRITE_FAILED]");
      await pi.emit("session_shutdown", {});
    });
  }
});
