/**
 * The holder's count raises (write-count.ts), on a pool that records them: writes within the window share one raise
 * carrying their number, a raise that fails is carried by the next, and a flush sends what is pending after the
 * raise in flight, once (what fails then is not retried after the close). No server: the statements are only
 * recorded (the end-to-end cases are in run-signature.test.ts and write-count-close.test.ts).
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { workflowError } from "@phasekit/core";
import type { Db } from "../src/db/db.js";
import { COUNT_WINDOW_MS, RAISE_COUNT, WriteCounts } from "../src/store/write-count.js";

interface Sent {
  slug: string;
  n: number;
  answer: (error?: Error) => void;
}

function recordingDb(): { db: Db; sent: Sent[] } {
  const sent: Sent[] = [];
  const pool = {
    query(config: { name: string; values: unknown[] }) {
      expect(config.name).toBe(RAISE_COUNT.name);
      return new Promise((resolve, reject) => {
        sent.push({ slug: config.values[1] as string, n: config.values[2] as number, answer: (error) => (error ? reject(error) : resolve({ rows: [], rowCount: 1 })) });
      });
    },
  };
  return { db: { pool, namespace: "ns" } as unknown as Db, sent };
}

describe("write counts", () => {
  afterEach(() => void vi.useRealTimers());

  it("writes while a raise is in flight and within the window after it go out as one raise with their number", async () => {
    vi.useFakeTimers();
    const { db, sent } = recordingDb();
    const counts = new WriteCounts(db);
    counts.wrote("a");
    await vi.advanceTimersByTimeAsync(0);
    expect(sent.map((s) => [s.slug, s.n])).toEqual([["a", 1]]);
    for (let i = 0; i < 5; i++) counts.wrote("a");
    counts.wrote("b", 2);
    sent[0]!.answer();
    await vi.advanceTimersByTimeAsync(COUNT_WINDOW_MS - 1);
    // b had no raise in flight: its own went out at once; a waits out its window.
    expect(sent.map((s) => [s.slug, s.n])).toEqual([["a", 1], ["b", 2]]);
    await vi.advanceTimersByTimeAsync(1);
    expect(sent.map((s) => [s.slug, s.n])).toEqual([["a", 1], ["b", 2], ["a", 5]]);
  });

  it("a raise that fails is carried by the next one; flush waits for the raise in flight, then sends the rest", async () => {
    vi.useFakeTimers();
    const { db, sent } = recordingDb();
    const counts = new WriteCounts(db);
    counts.wrote("a", 3);
    await vi.advanceTimersByTimeAsync(0);
    counts.wrote("a", 4);
    sent[0]!.answer(new Error("connection cut"));
    await vi.advanceTimersByTimeAsync(COUNT_WINDOW_MS);
    expect(sent.map((s) => s.n)).toEqual([3, 7]);
    counts.wrote("a");
    let flushed = false;
    const flush = counts.flush().then(() => (flushed = true));
    await vi.advanceTimersByTimeAsync(0);
    expect(sent.map((s) => s.n)).toEqual([3, 7]);
    expect(flushed).toBe(false);
    sent[1]!.answer();
    await vi.advanceTimersByTimeAsync(0);
    expect(sent.map((s) => s.n)).toEqual([3, 7, 1]);
    sent[2]!.answer();
    await flush;
    // Nothing pending: a flush sends nothing.
    await counts.flush();
    expect(sent).toHaveLength(3);
  });

  it("a flush (the store's close) sends once: a raise that fails then is dropped, and no timer is left to send it after the close", async () => {
    vi.useFakeTimers();
    const { db, sent } = recordingDb();
    const counts = new WriteCounts(db);
    counts.wrote("a", 2);
    await vi.advanceTimersByTimeAsync(0);
    const flush = counts.flush();
    sent[0]!.answer(new Error("connection cut"));
    await vi.advanceTimersByTimeAsync(0);
    expect(sent.map((s) => s.n)).toEqual([2, 2]);
    sent[1]!.answer(new Error("pool ended"));
    await flush;
    expect(vi.getTimerCount()).toBe(0);
    await vi.advanceTimersByTimeAsync(10 * COUNT_WINDOW_MS);
    expect(sent).toHaveLength(2);
    // The store can be used again after a close: a later write is counted as ever.
    counts.wrote("a");
    await vi.advanceTimersByTimeAsync(COUNT_WINDOW_MS);
    expect(sent.map((s) => s.n)).toEqual([2, 2, 1]);
  });

  it("a fenced write is counted when it landed or may have (a cut connection), not when the fence or the lease refused it", async () => {
    const { db, sent } = recordingDb();
    const counts = new WriteCounts(db);
    expect(await counts.write("landed", async () => true)).toBe(true);
    expect(await counts.write("fenced-out", async () => undefined)).toBe(undefined);
    const lost = workflowError("store-postgres", "LOCK_LOST", "taken");
    await expect(counts.write("lease-refused", () => Promise.reject(lost))).rejects.toBe(lost);
    const cut = Object.assign(new Error("Connection terminated unexpectedly"), { code: "ECONNRESET" });
    await expect(counts.write("cut", () => Promise.reject(cut))).rejects.toBe(cut);
    const flushed = counts.flush();
    for (let i = 0; i < 4 && sent.length < 2; i++) await new Promise((r) => setImmediate(r));
    for (const s of sent) s.answer();
    await flushed;
    expect(sent.map((s) => s.slug).sort()).toEqual(["cut", "landed"]);
  });

  it("a close that stops waiting (its bound passed) drops what is in flight: a write or a failed raise settling after it is never sent", async () => {
    vi.useFakeTimers();
    const { db, sent } = recordingDb();
    const counts = new WriteCounts(db);
    let land!: (v: true) => void;
    const inFlight = counts.write("late", () => new Promise<true>((r) => (land = r)));
    counts.wrote("raised", 2);
    await vi.advanceTimersByTimeAsync(0);
    expect(sent.map((s) => [s.slug, s.n])).toEqual([["raised", 2]]);
    // The raise and the write hang (a partition): the flush gives up after its bound.
    const flushed = counts.flush(100);
    await vi.advanceTimersByTimeAsync(100);
    await flushed;
    land(true);
    await inFlight;
    sent[0]!.answer(new Error("Query read timeout"));
    await vi.advanceTimersByTimeAsync(10 * COUNT_WINDOW_MS);
    expect(sent.map((s) => [s.slug, s.n])).toEqual([["raised", 2]]);
    expect(vi.getTimerCount()).toBe(0);
    // Writes sent after the close are counted as ever.
    await counts.write("late", async () => true);
    await vi.advanceTimersByTimeAsync(COUNT_WINDOW_MS);
    expect(sent.map((s) => [s.slug, s.n])).toEqual([["raised", 2], ["late", 1]]);
  });
});
