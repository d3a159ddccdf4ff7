import { describe, it, expect } from "vitest";
import { existsSync, mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { openRunLog } from "../src/store/run-log/run-log.js";
import { loadChain } from "../src/store/run-log/read-chain.js";
import { ValueFiles } from "../src/store/run-log/values.js";
import { archivedRecords } from "../src/store/run-log/archive.js";
import { spawnLines, untilStopped } from "./helpers/spawn-child.js";

const HOLDER = fileURLToPath(new URL("./helpers/runlog-old-holder.mjs", import.meta.url));
const temp = (): string => mkdtempSync(path.join(tmpdir(), "phasekit-displaced-"));

async function seed(runDir: string): Promise<void> {
  const log = await openRunLog({ runDir, inlineMax: 200 });
  await log.step("seed", {}, () => ({ by: "seed", pad: "s".repeat(400) }));
  await log.close();
}

async function boundaries(): Promise<number> {
  const runDir = temp();
  await seed(runDir);
  const child = spawnLines(process.execPath, [HOLDER, runDir, "0"]);
  const line = await child.waitFor(/^boundaries \d+$/);
  await child.exited;
  return Number(line.split(" ")[1]);
}

describe("a displaced holder never wins (SIGSTOP at every write boundary of a step, a compaction and a state)", () => {
  it("for every boundary: the new holder's work stays, the old holder's later writes stay invisible, the old ends LOCK_LOST", async () => {
    const total = await boundaries();
    expect(total).toBeGreaterThan(15);
    const seen = new Set<string>();
    for (let k = 1; k <= total; k++) {
      const runDir = temp();
      await seed(runDir);
      const old = spawnLines(process.execPath, [HOLDER, runDir, String(k)]);
      const stopped = await old.waitFor(/^stopped /);
      // Its line comes before its SIGSTOP lands: a SIGCONT sent in between would be lost.
      await untilStopped(old.proc.pid as number);
      seen.add(stopped.split(" ")[2] as string);
      const oldEpoch = Number((await old.waitFor(/^epoch /)).split(" ")[1]);
      const oldSegment = path.join(runDir, "runlog", `${String(oldEpoch).padStart(10, "0")}.seg`);
      // Where its records end, not the file's size: zero-filled room may follow them (segment-file.ts).
      const bytesAtStop = readFileSync(oldSegment).lastIndexOf(0x0a) + 1;
      // The new holder takes over while the old one is frozen at that boundary, and completes.
      const fresh = await openRunLog({ runDir, inlineMax: 200 });
      const x = await fresh.step("x", { k: "x" }, () => ({ by: "new", pad: "n".repeat(400) }));
      const y = await fresh.step("y", { k: "y" }, () => ({ by: "new" }));
      await fresh.putState({ by: "new", n: 2 });
      await fresh.compact();
      await fresh.close();
      const acknowledged = { x: x.output, y: y.output };
      // The fence: the new holder accepted only bytes the old one had written before it was stopped.
      const newHead = JSON.parse(readFileSync(path.join(runDir, "runlog", `${String(oldEpoch + 1).padStart(10, "0")}.seg`), "utf8").split("\n")[0] as string) as { pins: number[][] };
      const pin = newHead.pins.find(([e]) => e === oldEpoch);
      expect(pin?.[2] ?? 0, `boundary ${k} (${stopped})`).toBeLessThanOrEqual(bytesAtStop);
      old.proc.kill("SIGCONT");
      const end = await old.waitFor(/^end /);
      await old.exited;
      expect(end, `boundary ${k} (${stopped})`).toBe("end error LOCK_LOST");

      // What any later reader sees: exactly what the new holder acknowledged, every output still readable.
      const values = new ValueFiles();
      const view = await loadChain(path.join(runDir, "runlog"), values);
      // The old holder's last record (an event) is visible only if its bytes were written before the stop.
      const eventWritten = k >= total - 1;
      // (Events older than the latest full state live in the snapshot's archive: D17.)
      const events = [...archivedRecords(view.index, values).events, ...view.index.events];
      expect(events.map((e) => e.name), `boundary ${k}`).toEqual(eventWritten ? ["end"] : []);
      values.close();
      const check = await openRunLog({ runDir, inlineMax: 200 });
      const rerun = (): never => {
        throw new Error(`boundary ${k} (${stopped}): an acknowledged step was rerun`);
      };
      expect((await check.step("x", { k: "x" }, rerun)).output, `boundary ${k}`).toEqual(acknowledged.x);
      expect((await check.step("y", { k: "y" }, rerun)).output, `boundary ${k}`).toEqual(acknowledged.y);
      expect((await check.step("seed", {}, rerun)).output).toMatchObject({ by: "seed" });
      expect(check.state(), `boundary ${k}`).toEqual({ by: "new", n: 2 });
      await check.close();
      for (const name of readdirSync(path.join(runDir, "artifacts"))) expect(existsSync(path.join(runDir, "artifacts", name))).toBe(true);
    }
    // The sweep reached writes, syncs, the fence, the snapshot and the deletions.
    for (const name of ["write", "write(room)", "fdatasync", "readdir(fence)", "open(artifact)", "fdatasync(artifact)", "open(snapshot)", "write(snapshot)", "unlink"]) {
      expect([...seen]).toContain(name);
    }
  }, 120_000);
});
