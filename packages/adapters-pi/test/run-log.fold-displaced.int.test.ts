import { existsSync, mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { openRunLog } from "../src/store/run-log/run-log.js";
import { FOLD_AT_SEGMENTS } from "../src/store/run-log/fold.js";
import { readRunLog } from "../src/store/run-log/reader.js";
import { spawnLines, untilStopped } from "./helpers/spawn-child.js";

const HOLDER = fileURLToPath(new URL("./helpers/runlog-folding-holder.mjs", import.meta.url));
const temp = (): string => mkdtempSync(path.join(tmpdir(), "phasekit-fold-displaced-"));
const rerun = (what: string) => (): never => {
  throw new Error(`${what}: an acknowledged step was rerun`);
};

// Enough acquisitions that write, so the next holder folds when it closes.
async function seed(runDir: string): Promise<void> {
  for (let i = 0; i < FOLD_AT_SEGMENTS; i++) {
    const log = await openRunLog({ runDir, inlineMax: 200 });
    await log.step(`seed${i}`, { i }, () => ({ i, pad: "s".repeat(400) }));
    await log.close();
  }
  expect(readdirSync(path.join(runDir, "runlog")).filter((n) => n.endsWith(".seg"))).toHaveLength(FOLD_AT_SEGMENTS);
}

describe("a holder displaced while it folds its history at close never costs the new holder anything", () => {
  it("SIGSTOP at every boundary of a step and the fold; a new holder claims, writes and closes; the old one resumes", async () => {
    const probe = temp();
    await seed(probe);
    const counted = spawnLines(process.execPath, [HOLDER, probe, "0"]);
    const total = Number((await counted.waitFor(/^boundaries \d+$/)).split(" ")[1]);
    await counted.exited;
    // The fold ran in the probe: at most the snapshot and the next epoch's segment are left.
    expect(readdirSync(path.join(probe, "runlog")).length).toBeLessThanOrEqual(2);
    expect(total).toBeGreaterThan(15);
    const seen = new Set<string>();
    for (let k = 1; k <= total; k++) {
      const runDir = temp();
      await seed(runDir);
      const old = spawnLines(process.execPath, [HOLDER, runDir, String(k)]);
      const stopped = await old.waitFor(/^stopped /);
      // Its line comes before its SIGSTOP lands: a SIGCONT sent in between would be lost.
      await untilStopped(old.proc.pid as number);
      const at = `boundary ${k} (${stopped})`;
      seen.add(stopped.split(" ")[2] as string);
      // The new holder takes over while the old one is frozen there, writes, and closes.
      const fresh = await openRunLog({ runDir, inlineMax: 200 });
      const x = await fresh.step("x", { k: "x" }, () => ({ by: "new", pad: "n".repeat(400) }));
      await fresh.putState({ by: "new" });
      await fresh.close();
      old.proc.kill("SIGCONT");
      await old.waitFor(/^end /);
      await old.exited;

      // Every later reader and holder sees what the new holder acknowledged, with every output readable.
      const view = await readRunLog(runDir);
      expect(view?.state(), at).toEqual({ by: "new" });
      view?.close();
      const check = await openRunLog({ runDir, inlineMax: 200 });
      expect((await check.step("x", { k: "x" }, rerun(at))).output, at).toEqual(x.output);
      for (let i = 0; i < FOLD_AT_SEGMENTS; i++) expect((await check.step(`seed${i}`, { i }, rerun(at))).output, at).toMatchObject({ i });
      await check.close();
      const art = x.entry.artifact;
      expect(art !== undefined && existsSync(path.join(runDir, art)), at).toBe(true);
    }
    for (const name of ["write(snapshot)", "readdir(fence)", "open(claim)", "read(history)", "fdatasync", "unlink"]) expect([...seen]).toContain(name);
  }, 120_000);

  it("SIGKILL at every boundary of a step and the fold: every acknowledged step stays, and the next close folds", async () => {
    const probe = temp();
    await seed(probe);
    const counted = spawnLines(process.execPath, [HOLDER, probe, "0"]);
    const total = Number((await counted.waitFor(/^boundaries \d+$/)).split(" ")[1]);
    await counted.exited;
    for (let k = 1; k <= total; k++) {
      const runDir = temp();
      await seed(runDir);
      const child = spawnLines(process.execPath, [HOLDER, runDir, String(k)]);
      const stopped = await child.waitFor(/^stopped /);
      const at = `boundary ${k} (${stopped})`;
      const acknowledged = child.lines.includes("acknowledged");
      child.proc.kill("SIGKILL");
      await child.exited;
      const check = await openRunLog({ runDir, inlineMax: 200 });
      for (let i = 0; i < FOLD_AT_SEGMENTS; i++) expect((await check.step(`seed${i}`, { i }, rerun(at))).output, at).toMatchObject({ i });
      if (acknowledged) expect((await check.step("old", { k: "old" }, rerun(at))).output, at).toMatchObject({ by: "old" });
      await check.putState({ after: k });
      await check.close();
      const again = await openRunLog({ runDir, inlineMax: 200 });
      expect(again.state(), at).toEqual({ after: k });
      await again.close();
      expect(readdirSync(path.join(runDir, "runlog")).length, at).toBeLessThanOrEqual(8);
    }
  }, 120_000);
});
