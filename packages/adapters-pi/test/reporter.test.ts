import { describe, it, expect } from "vitest";
import { isWorkflowError } from "@phasekit/core";
import { createReporter } from "../src/run/reporter.js";
import type { ReporterClock, ReporterMessage } from "../src/run/reporter.js";

/** A manual clock: timers fire only when the test advances time. */
function fakeClock() {
  let now = 1_000;
  let seq = 0;
  const timers = new Map<number, { at: number; fn: () => void }>();
  const clock: ReporterClock = {
    now: () => now,
    setTimeout: (fn, ms) => {
      const id = ++seq;
      timers.set(id, { at: now + ms, fn });
      return id;
    },
    clearTimeout: (h) => void timers.delete(h as number),
  };
  const advance = (ms: number): void => {
    now += ms;
    for (const [id, t] of [...timers].sort((a, b) => a[1].at - b[1].at)) {
      if (t.at <= now && timers.has(id)) {
        timers.delete(id);
        t.fn();
      }
    }
  };
  return { clock, advance, pending: () => timers.size };
}

function sink() {
  const lines: string[] = [];
  return { stream: { write: (s: string) => lines.push(s) }, lines };
}

describe("createReporter", () => {
  it("keeps at most 5 messages and evicts the oldest", () => {
    const { clock } = fakeClock();
    const r = createReporter({ clock, onChange: () => {} });
    for (let i = 1; i <= 7; i++) r.info(`m ${i}`);
    expect(r.messages().map((m) => m.text)).toEqual(["m 3", "m 4", "m 5", "m 6", "m 7"]);
  });

  it("the same id replaces the message in place of a new one and restarts its TTL", () => {
    const { clock, advance } = fakeClock();
    const r = createReporter({ clock, onChange: () => {} });
    r.info("first", { id: "build" });
    r.info("other");
    advance(5_000);
    r.error("second", { id: "build" });
    expect(r.messages().map((m) => [m.id, m.level, m.text])).toEqual([
      ["auto:1", "info", "other"],
      ["build", "error", "second"],
    ]);
    advance(5_000); // 10 s: the info expired, the replaced error (20 s from t=5 s) stays
    expect(r.messages().map((m) => m.text)).toEqual(["second"]);
    advance(15_001);
    expect(r.messages()).toEqual([]);
  });

  it("expires each level after its TTL: info 8 s, warning 12 s, error 20 s", () => {
    const { clock, advance } = fakeClock();
    const seen: string[][] = [];
    const r = createReporter({ clock, onChange: (ms) => seen.push(ms.map((m) => m.level)) });
    r.info("i");
    r.warning("w");
    r.error("e");
    advance(7_999);
    expect(r.messages()).toHaveLength(3);
    advance(1);
    expect(r.messages().map((m) => m.level)).toEqual(["warning", "error"]);
    advance(3_999);
    expect(r.messages()).toHaveLength(2);
    advance(1);
    expect(r.messages().map((m) => m.level)).toEqual(["error"]);
    advance(8_000);
    expect(r.messages()).toEqual([]);
    expect(seen.at(-1)).toEqual([]);
  });

  it("passes truncated, collapsed text to the UI host", () => {
    const { clock } = fakeClock();
    let last: readonly ReporterMessage[] = [];
    const r = createReporter({ clock, onChange: (ms) => (last = ms) });
    r.warning(`  lots\n\nof   ${"x".repeat(300)}`);
    expect(last[0]?.text.startsWith("lots of x")).toBe(true);
    expect([...(last[0]?.text ?? "")].length).toBe(140);
  });

  it("headless mode writes one `level: text` line per message to the stream", () => {
    const { clock } = fakeClock();
    const { stream, lines } = sink();
    const r = createReporter({ clock, stream });
    r.info("step one\ndone");
    r.warning("slow");
    r.error("boom", { id: "x" });
    expect(lines).toEqual(["info: step one done\n", "warning: slow\n", "error: boom\n"]);
  });

  it("does nothing at all after dispose and clears every timer", () => {
    const { clock, advance, pending } = fakeClock();
    const { stream, lines } = sink();
    let calls = 0;
    const r = createReporter({ clock, stream, headless: true, onChange: () => void calls++ });
    r.info("a");
    r.error("b");
    expect(pending()).toBe(2);
    const before = calls;
    r.dispose();
    expect(calls).toBe(before + 1); // one last empty list clears the widget
    expect(pending()).toBe(0);
    expect(r.disposed).toBe(true);
    expect(r.info("late")).toBeUndefined();
    r.dismiss("auto:1");
    r.dispose();
    advance(60_000);
    expect(calls).toBe(before + 1);
    expect(lines).toHaveLength(2);
    expect(r.messages()).toEqual([]);
  });

  it("dismiss removes a message; a throwing onChange becomes one error line, not a crash", () => {
    const { clock, advance } = fakeClock();
    const { stream, lines } = sink();
    const r = createReporter({ clock, stream, headless: false, onChange: () => { throw new Error("ui gone"); } });
    r.info("a", { id: "a" });
    r.dismiss("a");
    r.info("b");
    expect(() => advance(9_000)).not.toThrow();
    expect(lines.every((l) => l.startsWith("error: [phasekit] [reporter] onChange threw: Error: ui gone"))).toBe(true);
    expect(lines).toHaveLength(4);
  });

  it("uses real unref'd timers by default", () => {
    const r = createReporter({ onChange: () => {} });
    r.info("x");
    expect(r.messages()).toHaveLength(1);
    r.dispose();
  });

  it("rejects bad options at once", () => {
    for (const bad of [{ maxMessages: 0 }, { maxLength: 1.5 }, { ttlMs: { info: -1 } }]) {
      let caught: unknown;
      try {
        createReporter(bad);
      } catch (e) {
        caught = e;
      }
      expect(isWorkflowError(caught, "INVALID_OPTIONS")).toBe(true);
    }
  });
});
