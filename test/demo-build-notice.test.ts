/**
 * `pnpm demo` builds the packages before pi starts (pi loads the built extension file). On a fresh clone that
 * build is ~20 s of an empty screen: the demo must say what it is doing before the build starts, and when it ends.
 */
import { describe, expect, it } from "vitest";
import { buildForPi, type BuildRunner } from "../examples/pi/pi-demo.js";

describe("the demo's build notice", () => {
  it("is said before tsc -b runs, and the end of the build is said after it", () => {
    const seen: string[] = [];
    const run: BuildRunner = (_command, args) => {
      seen.push(`run ${args.map((a) => a.split("/").pop()).join(" ")}`);
      return { status: 0, stdout: "", stderr: "" };
    };
    buildForPi((line) => seen.push(`say ${line}`), run);
    expect(seen).toHaveLength(3);
    expect(seen[0]).toMatch(/^say .*building the packages.*tsc -b/);
    expect(seen[1]).toBe("run tsc -b");
    expect(seen[2]).toMatch(/^say .*built in \d+\.\d s; starting pi$/);
  });

  it("a failing build is an error with tsc's output, after the notice", () => {
    const seen: string[] = [];
    const run: BuildRunner = () => ({ status: 2, stdout: "src/x.ts(1,1): error TS2304", stderr: "" });
    expect(() => buildForPi((line) => seen.push(line), run)).toThrow(/tsc -b failed:\nsrc\/x\.ts\(1,1\): error TS2304/);
    expect(seen).toHaveLength(1);
  });
});
