/**
 * Hostile run-log files, met by the holder and by readers: a too-big segment, a history line naming a file
 * outside the run, malformed state deltas, an empty segment planted at the top of the epoch space, and
 * `artifacts/` swapped for a symlink to another run before a compaction. Each is a typed error naming the file,
 * and nothing outside the run is read whole, renamed or deleted.
 */
import { describe, expect, it } from "vitest";
import { appendFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { isWorkflowError } from "@phasekit/core";
import { openRunLog } from "../../src/store/run-log/run-log.js";
import { readRunLog } from "../../src/store/run-log/reader.js";
import { fingerprint } from "../../src/engine/fingerprint.js";

const temp = (): string => mkdtempSync(path.join(tmpdir(), "phasekit-hostile-log-"));
const seg = (runDir: string, epoch: number): string => path.join(runDir, "runlog", `${String(epoch).padStart(10, "0")}.seg`);
const BIG = "B".repeat(70 * 1024);

/** The error `p` rejects with (fails the test when it resolves). */
async function refusal(p: Promise<unknown>): Promise<{ code: string; message: string }> {
  const r = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(r, "expected a refusal").toBeDefined();
  expect(isWorkflowError(r), String(r)).toBe(true);
  return r as { code: string; message: string };
}

async function runWithOneStep(output: string = "a"): Promise<string> {
  const runDir = temp();
  const log = await openRunLog({ runDir });
  await log.step("a", { n: 1 }, () => output);
  await log.putState({ phase: "one", items: [1, 2, 3] });
  await log.close();
  return runDir;
}

describe("run log: a too-big segment is FILE_TOO_LARGE naming it, never read whole", () => {
  for (const [label, bytes] of [
    ["600 MB", 600 * 1024 * 1024],
    ["3 GiB", 3 * 1024 * 1024 * 1024],
  ] as const) {
    it(`the head segment replaced by a ${label} sparse file`, async () => {
      const runDir = await runWithOneStep();
      rmSync(seg(runDir, 1));
      writeFileSync(seg(runDir, 1), "");
      truncateSync(seg(runDir, 1), bytes);
      for (const open of [() => openRunLog({ runDir }), () => readRunLog(runDir)]) {
        const e = await refusal(open());
        expect(e.code).toBe("FILE_TOO_LARGE");
        expect(e.message).toContain(seg(runDir, 1));
      }
    });
  }

  it("the head segment grown to 600 MB behind its records", async () => {
    const runDir = await runWithOneStep();
    truncateSync(seg(runDir, 1), 600 * 1024 * 1024);
    const e = await refusal(readRunLog(runDir));
    expect(e.code).toBe("FILE_TOO_LARGE");
    expect(e.message).toContain(seg(runDir, 1));
  });
});

describe("run log: artifact names read from a history line stay inside the run", () => {
  for (const art of ["artifacts/../../victim", "/tmp/victim", "artifacts/x.json", "../artifacts/" + "a".repeat(64) + ".json"]) {
    it(`a done line naming ${JSON.stringify(art)} is CORRUPT_FILE naming the segment; nothing outside is renamed`, async () => {
      const base = temp();
      const runDir = path.join(base, "run");
      mkdirSync(runDir);
      const log = await openRunLog({ runDir });
      await log.step("a", { n: 1 }, () => "a");
      await log.close();
      const victim = path.join(base, "victim");
      writeFileSync(victim, "VICTIM\n");
      const line = { t: "done", e: 1, k: "a", in: fingerprint({ n: 1 }), a: 1, ofp: fingerprint("x"), art };
      appendFileSync(seg(runDir, 1), `${JSON.stringify(line)}\n`);
      const e = await refusal(
        (async () => {
          const again = await openRunLog({ runDir });
          try {
            await again.step("a", { n: 1 }, () => "rerun");
          } finally {
            await again.close();
          }
        })(),
      );
      expect(e.code).toBe("CORRUPT_FILE");
      expect(e.message).toContain(seg(runDir, 1));
      expect(readdirSync(base).sort()).toEqual(["run", "victim"]);
      expect(readFileSync(victim, "utf8")).toBe("VICTIM\n");
      // Readers refuse it the same way.
      const view = await readRunLog(runDir);
      try {
        expect(() => view?.entries()).toThrow(/CORRUPT_FILE|holds/);
      } finally {
        view?.close();
      }
    });
  }
});

describe("run log: malformed state deltas are CORRUPT_FILE naming the segment", () => {
  const cases: Array<[string, string]> = [
    ["a delta whose path does not fit the state", `[[["nope","deep"],1]]`],
    ["a delta that is not JSON", `not json`],
    ["a delta that is not a list of operations", `{"a":1}`],
    ["a delta that deletes the root", `[[[]]]`],
    ["an array index far past the end", `[[["items",1000000000],1]]`],
    ["a full state that is not JSON", null as unknown as string],
  ];
  for (const [label, payload] of cases) {
    it(label, async () => {
      const runDir = await runWithOneStep();
      const line = payload === null ? `{"t":"state","e":1,"n":9,"d":0}\t{"broken"\n` : `{"t":"state","e":1,"n":9,"d":1}\t${payload}\n`;
      appendFileSync(seg(runDir, 1), line);
      const view = await readRunLog(runDir);
      try {
        let thrown: unknown;
        try {
          view?.state();
        } catch (error) {
          thrown = error;
        }
        expect(isWorkflowError(thrown, "CORRUPT_FILE"), String(thrown)).toBe(true);
        expect((thrown as Error).message).toContain(seg(runDir, 1));
      } finally {
        view?.close();
      }
    });
  }
});

describe("run log: an empty segment planted at the top of the epoch space", () => {
  it("the next claim is a typed error naming the planted file (not LOCKED), and readers keep the history", async () => {
    const runDir = await runWithOneStep();
    const planted = seg(runDir, 9_999_999_999);
    writeFileSync(planted, "");
    for (let i = 0; i < 2; i++) {
      const e = await refusal(openRunLog({ runDir }));
      expect(e.code).toBe("CORRUPT_FILE");
      expect(e.message).toContain(planted);
    }
    expect(readdirSync(path.join(runDir, "runlog")).sort()).toEqual(["0000000001.seg", "9999999999.seg"]);
    const view = await readRunLog(runDir);
    expect(view?.entry("a")?.status).toBe("completed");
    view?.close();
  });
});

describe("run log: compaction deletes only inside the run", () => {
  it("artifacts/ swapped for a symlink to another run's artifacts: UNSAFE_FILE naming it, the other run's files kept", async () => {
    const other = await runWithOneStep(BIG);
    const otherArtifacts = path.join(other, "artifacts");
    const theirs = readdirSync(otherArtifacts);
    expect(theirs).toHaveLength(1);
    const runDir = temp();
    const log = await openRunLog({ runDir });
    await log.step("a", { n: 1 }, () => BIG + "mine");
    renameSync(path.join(runDir, "artifacts"), path.join(runDir, "artifacts.moved"));
    symlinkSync(otherArtifacts, path.join(runDir, "artifacts"));
    const e = await refusal(log.compact());
    expect(e.code).toBe("UNSAFE_FILE");
    expect(e.message).toContain(path.join(runDir, "artifacts"));
    expect(readdirSync(otherArtifacts)).toEqual(theirs);
    await log.close();
  });

  it("runlog/ swapped for a symlink to another run's history: nothing of the other run is deleted", async () => {
    const other = await runWithOneStep();
    const otherLog = path.join(other, "runlog");
    // The other run has an older segment a compaction of epoch 2 would think superseded.
    const again = await openRunLog({ runDir: other });
    await again.close();
    const theirs = readdirSync(otherLog).sort();
    const runDir = temp();
    const a = await openRunLog({ runDir });
    await a.close();
    const log = await openRunLog({ runDir });
    await log.step("a", { n: 1 }, () => "a");
    renameSync(path.join(runDir, "runlog"), path.join(runDir, "runlog.moved"));
    symlinkSync(otherLog, path.join(runDir, "runlog"));
    const e = await refusal(log.compact());
    expect(["UNSAFE_FILE", "LOCK_LOST"]).toContain(e.code);
    expect(readdirSync(otherLog).sort()).toEqual(theirs);
    await log.close();
  });
});
