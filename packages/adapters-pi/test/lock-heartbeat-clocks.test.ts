/**
 * The holder's freshness rule (`refreshOverdue`, lock/heartbeat.ts), which lets a step's body start with no I/O:
 * a heartbeat is overdue when either clock says so. A machine suspended past the stale time leaves the monotonic
 * clock where it was while the wall clock (and a contender on another host) goes on; a wall clock stepped back
 * must not make a lapsed heartbeat look fresh either.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { refreshClock, refreshOverdue, sinceRefresh } from "../src/lock/heartbeat.js";

afterEach(() => {
  vi.useRealTimers();
});

describe("refreshOverdue", () => {
  it("is fresh right after a refresh", () => {
    expect(refreshOverdue(refreshClock(), 10_000)).toBe(false);
  });

  it("is overdue after a suspend: the wall clock moved an hour, the monotonic one did not", () => {
    const sent = refreshClock();
    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() + 3_600_000 });
    expect(sinceRefresh(sent)).toBeGreaterThan(3_599_000);
    expect(refreshOverdue(sent, 10_000)).toBe(true);
  });

  it("is overdue by the monotonic clock when the wall clock was stepped back", () => {
    const sent = { mono: performance.now() - 20_000, wall: Date.now() + 60_000 };
    expect(refreshOverdue(sent, 10_000)).toBe(true);
  });
});
