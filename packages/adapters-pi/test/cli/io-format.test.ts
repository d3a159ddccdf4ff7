/** The CLI's small pieces: progress only on a terminal, exit codes of typed errors, durations, tables. */
import fc from "fast-check";
import { workflowError } from "@phasekit/core";
import { describe, expect, it } from "vitest";
import { EXIT, progress, toFailure, type CliIo } from "../../src/cli/io.js";
import { age, clip, duration, parseDuration, table } from "../../src/cli/format.js";
import { journalSentences } from "../../src/cli/journal-text.js";

function fakeIo(isTTY: boolean): { io: CliIo; err: () => string } {
  let err = "";
  const io: CliIo = { stdout: { write: () => true }, stderr: { isTTY, write: (s: string) => (err += s) }, stdin: (async function* () {})(), cwd: "/", env: {}, now: () => new Date(0) };
  return { io, err: () => err };
}

describe("cli io", () => {
  it("progress writes a counter on a terminal and clears it; piped, it writes nothing", () => {
    const tty = fakeIo(true);
    const bar = progress(tty.io, "validating");
    bar.tick(1);
    bar.done();
    expect(tty.err()).toBe("\rvalidating 1\r\x1b[K");
    const piped = fakeIo(false);
    const quiet = progress(piped.io, "validating");
    quiet.tick(1);
    quiet.done();
    expect(piped.err()).toBe("");
  });

  it("maps typed errors to the documented exit codes", () => {
    expect(toFailure(workflowError("x", "NOT_FOUND", "m")).exitCode).toBe(EXIT.notFound);
    expect(toFailure(workflowError("x", "LOCKED", "m")).exitCode).toBe(EXIT.busy);
    expect(toFailure(workflowError("x", "CORRUPT_FILE", "m")).exitCode).toBe(EXIT.failed);
    // A value the command cannot take is bad usage, whether the command or the library it called refused it.
    expect(toFailure(workflowError("x", "INVALID_OPTIONS", "m")).exitCode).toBe(EXIT.usage);
    expect(toFailure(new Error("boom"))).toMatchObject({ exitCode: EXIT.failed, error: { code: "INTERNAL", message: "boom" } });
  });

  it("parseDuration reads every unit back; anything else is undefined", () => {
    const units = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 } as const;
    fc.assert(
      fc.property(fc.nat({ max: 10_000 }), fc.constantFrom(...(Object.keys(units) as Array<keyof typeof units>)), (n, u) => {
        expect(parseDuration(`${n}${u}`)).toBe(n * units[u]);
      }),
    );
    for (const bad of ["", "d", "30x", "-1d", "1 d", "1e3s", "30dd"]) expect(parseDuration(bad), bad).toBeUndefined();
  });

  it("tables pad every column but the last; ages use the largest whole unit", () => {
    expect(table(["A", "BB"], [["xxx", "y"], ["z", ""]])).toBe("A    BB\nxxx  y\nz\n");
    expect([age(59_999), age(60_000), age(3_600_000 * 5), age(86_400_000 * 40)]).toEqual(["59s", "1m", "5h", "40d"]);
  });

  it("durations round once: never `1m60s` or `60.0s`; seconds and minutes stay under 60", () => {
    expect([duration(999.6), duration(59_960), duration(119_600), duration(3_599_600), duration(7_170_000)]).toEqual(["1000ms", "1m00s", "2m00s", "1h00m", "2h00m"]);
    fc.assert(
      fc.property(fc.double({ min: 0, max: 1e9, noNaN: true }), (ms) => {
        const d = duration(ms);
        expect(d).toMatch(/^(\d+ms|\d+\.\ds|\d+m[0-5]\ds|\d+h[0-5]\dm)$/);
        if (d.endsWith("s") && !d.endsWith("ms") && !d.includes("m")) expect(Number(d.slice(0, -1))).toBeLessThan(60);
      }),
    );
  });

  it("clip never cuts a character in half (emoji, flags, combining marks) and keeps within its width", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme", maxLength: 300 }), fc.integer({ min: 4, max: 200 }), (text, max) => {
        const out = clip(text, max);
        if (text.length <= max) expect(out).toBe(text);
        else expect([out.length <= max, out.endsWith("..."), text.startsWith(out.slice(0, -3))]).toEqual([true, true, true]);
        expect(out).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/);
      }),
    );
    // A journal line whose data is cut right inside an emoji.
    const [line = ""] = journalSentences([{ seq: 1, generation: 1, at: "x", event: "e", data: { text: `${"a".repeat(146)}🧪🧪🧪🧪🧪🧪🧪` } }]);
    expect(line).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/);
    expect(line.endsWith("🧪...")).toBe(true);
  });
});
