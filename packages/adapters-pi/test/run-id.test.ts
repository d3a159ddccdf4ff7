import { describe, it, expect } from "vitest";
import { isWorkflowError } from "@phasekit/core";
import { generateRunId, isRunId, RUN_ID_ALPHABET, RUN_ID_REJECT_FROM, runIdFromRandom } from "../src/run/id.js";

/** A byte source that replays `bytes` in order (then repeats the last batch's tail pattern). */
function replay(bytes: number[]) {
  let at = 0;
  return (size: number) => Uint8Array.from({ length: size }, () => bytes[at++ % bytes.length] ?? 0);
}

describe("run ids", () => {
  it("are 8 characters of lowercase base36", async () => {
    for (let i = 0; i < 200; i++) {
      const id = await generateRunId(() => false);
      expect(id).toMatch(/^[0-9a-z]{8}$/);
      expect(isRunId(id)).toBe(true);
    }
    expect(isRunId("ABCDEFGH")).toBe(false);
    expect(isRunId("abc")).toBe(false);
    expect(isRunId("abcdefgh1")).toBe(false);
    expect(isRunId(12345678)).toBe(false);
  });

  it("rejects bytes >= 252 so every character is hit exactly 7 times over the accepted bytes", () => {
    expect(RUN_ID_REJECT_FROM).toBe(252);
    const counts = new Map<string, number>();
    for (let b = 0; b < 256; b++) {
      const id = runIdFromRandom(replay([b, b, b, b, b, b, b, b, 0]));
      if (b >= 252) {
        expect(id).toBe("00000000"); // the rejected bytes were skipped, the zeros after them used
        continue;
      }
      const ch = id[0] ?? "";
      counts.set(ch, (counts.get(ch) ?? 0) + 1);
    }
    expect(counts.size).toBe(RUN_ID_ALPHABET.length);
    expect(new Set(counts.values())).toEqual(new Set([7]));
  });

  it("maps 252..255 through rejection, not modulo (255 % 36 would be 'b')", () => {
    expect(runIdFromRandom(replay([255, 254, 253, 252, 11, 11, 11, 11, 11, 11, 11, 11]))).toBe("bbbbbbbb");
  });

  it("fails loudly on a source that only yields rejected bytes", () => {
    expect(() => runIdFromRandom(replay([255]))).toThrow(/rejected bytes/);
  });

  it("retries on collision and returns the first free id", async () => {
    const taken = new Set(["00000000", "11111111"]);
    const seen: string[] = [];
    const id = await generateRunId(
      async (x) => {
        seen.push(x);
        return taken.has(x);
      },
      replay([...Array(16).fill(0), ...Array(16).fill(1), ...Array(16).fill(2)]),
    );
    expect(seen).toEqual(["00000000", "11111111", "22222222"]);
    expect(id).toBe("22222222");
  });

  it("gives up with a typed error after maxAttempts collisions", async () => {
    let caught: unknown;
    try {
      await generateRunId(() => true, undefined, { maxAttempts: 3 });
    } catch (e) {
      caught = e;
    }
    expect(isWorkflowError(caught, "MAX_ATTEMPTS_REACHED")).toBe(true);
    expect(String((caught as Error).message)).toMatch(/^\[phasekit\] \[run-id\] no free run id after 3 attempts/);
  });
});
