import { describe, it, expect } from "vitest";
import { mkdtempSync, readFileSync, writeFileSync, existsSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { spawnLockChild } from "./helpers/lock-children.js";

const PROCESSES = 16;
const INCREMENTS = process.env.CI === "true" ? 200 : 20;

describe("plan lock under contention", () => {
  it(`${PROCESSES} processes × ${INCREMENTS} increments of a counter under the lock: the total is exact`, async () => {
    const runDir = mkdtempSync(path.join(tmpdir(), "phasekit-lock-counter-"));
    writeFileSync(path.join(runDir, "counter"), "0");
    const children = Array.from({ length: PROCESSES }, () => spawnLockChild("lock-counter.mjs", [runDir, String(INCREMENTS)]));
    const results = await Promise.all(children.map((c) => c.exited));
    for (const r of results) expect(r, r.stderr).toMatchObject({ code: 0 });
    expect(Number(readFileSync(path.join(runDir, "counter"), "utf8"))).toBe(PROCESSES * INCREMENTS);
    // Every holder released: no lock and no temp or aside directories remain.
    expect(existsSync(path.join(runDir, ".lock"))).toBe(false);
    expect(readdirSync(runDir).sort()).toEqual(["counter"]);
  }, 240_000);
});
