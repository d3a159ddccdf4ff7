import { describe, it, expect } from "vitest";
import { mkdtempSync, mkdirSync, writeFileSync, readFileSync, utimesSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { hostname } from "node:os";
import { spawnLockChild } from "./helpers/lock-children.js";
import { processIdentity } from "../src/io/process-space.js";

const CONTENDERS = 16;
const ROUNDS = process.env.CI === "true" ? 30 : 6;

/** A lock left by a dead holder an hour ago (an empty legacy directory every third round). */
function plantStaleLock(runDir: string, round: number): void {
  const lockDir = path.join(runDir, ".lock");
  mkdirSync(lockDir);
  if (round % 3 !== 2) {
    const token = "dead".padEnd(32, String(round % 10));
    // Provably dead: this host, boot and pid namespace, and a pid that does not exist. (A holder that cannot be
    // proven dead is watched for the stale time first: plan-lock.identity.int.test.ts.)
    const holder = { schemaVersion: 1, token, tool: "crashed", pid: 999_999, host: hostname(), since: "2020-01-01T00:00:00.000Z", ...processIdentity() };
    writeFileSync(path.join(lockDir, `holder-${token}.json`), JSON.stringify(holder));
  }
  const past = new Date(Date.now() - 3_600_000);
  utimesSync(lockDir, past, past);
}

/** Checks the O_APPEND log: strictly alternating enter/exit of the same holder, one holder per round. */
function checkNoOverlap(log: string): Map<string, string> {
  const winners = new Map<string, string>();
  let inside: { id: string; round: string } | null = null;
  for (const line of log.trim().split("\n")) {
    const [what, id = "", round = ""] = line.split(" ");
    if (what === "enter") {
      expect(inside, `"${line}" while ${JSON.stringify(inside)} still holds the lock`).toBeNull();
      expect(winners.has(round), `second winner in round ${round}`).toBe(false);
      inside = { id, round };
      winners.set(round, id);
    } else {
      expect(inside).toEqual({ id, round });
      inside = null;
    }
  }
  expect(inside).toBeNull();
  return winners;
}

describe("plan lock: stale takeover", () => {
  it(`a planted stale lock with ${CONTENDERS} contenders × ${ROUNDS} rounds: one holder at a time, one winner per round`, async () => {
    const runDir = mkdtempSync(path.join(tmpdir(), "phasekit-lock-stale-"));
    const log = path.join(mkdtempSync(path.join(tmpdir(), "phasekit-lock-log-")), "holders.log");
    writeFileSync(log, "");
    const children = Array.from({ length: CONTENDERS }, (_, i) => spawnLockChild("lock-contender.mjs", [runDir, String(i), log]));
    await Promise.all(children.map((c) => c.next(/^ready$/, true)));
    for (let round = 0; round < ROUNDS; round++) {
      plantStaleLock(runDir, round);
      const results = children.map((c) => c.next(new RegExp(`^result ${round} `)));
      for (const c of children) c.send(`go ${round}`);
      const lines = await Promise.all(results);
      const won = lines.map((l, i) => [l, i] as const).filter(([l]) => l.includes(" won "));
      expect(won.map(([l]) => l), `round ${round}: ${lines.join(" | ")}`).toHaveLength(1);
      for (const l of lines) if (!l.includes(" won ")) expect(l).toBe(`result ${round} lost LOCKED`);
      const winner = children[won[0]![1]]!;
      const released = winner.next(new RegExp(`^released ${round} `));
      winner.send(`release ${round}`);
      expect(await released).toBe(`released ${round} ok`);
      expect(existsSync(path.join(runDir, ".lock"))).toBe(false);
    }
    for (const c of children) c.end();
    for (const r of await Promise.all(children.map((c) => c.exited))) expect(r, r.stderr).toMatchObject({ code: 0 });
    expect(checkNoOverlap(readFileSync(log, "utf8")).size).toBe(ROUNDS);
  }, 240_000);
});
