import { describe, it, expect } from "vitest";
import fc from "fast-check";
import { isWorkflowError } from "@phasekit/core";
import { composeVerifierPrompt, parseVerifierVerdict } from "../src/verification/verifier-prompt.js";

const RUNS = process.env.CI === "true" ? 2_000 : 200;

describe("composeVerifierPrompt", () => {
  it("states the task, phase, changes, checks and the exact answer format, read-only", () => {
    const p = composeVerifierPrompt({
      task: "Add a --json flag",
      phase: "implement",
      changesSummary: "src/cli.ts: new flag",
      commands: ["pnpm typecheck", { command: "pnpm test", status: "failed", outputTail: "1 failed\n```\nnested" }],
      criteria: ["the README mentions the flag"],
    });
    expect(p).toContain("read-only");
    expect(p).toContain("Do not edit");
    expect(p).toContain("## Task\nAdd a --json flag");
    expect(p).toContain("## Phase\nimplement");
    expect(p).toContain("- `pnpm test` — failed");
    expect(p).toContain("- the README mentions the flag");
    expect(p).toMatch(/\nVERIFICATION: PASS\nor\nVERIFICATION: FAIL - <the main reason>\n/);
    // command output cannot close the prompt's code fence early
    expect(p.match(/^```$/gm)).toHaveLength(2);
  });

  it("the prompt itself is not read as a verdict (it names both words)", () => {
    const p = composeVerifierPrompt({ task: "t", changesSummary: "c" });
    const r = parseVerifierVerdict(p);
    expect(r.ok).toBe(false);
  });
});

describe("parseVerifierVerdict", () => {
  it.each([
    ["Checked everything.\nVERIFICATION: PASS", "pass", "Checked everything."],
    ["VERIFICATION: FAIL - tests break in cli.test.ts", "fail", "tests break in cli.test.ts"],
    ["VERIFICATION: FAIL — missing docs", "fail", "missing docs"],
    ["VERIFICATION: FAIL: lint errors", "fail", "lint errors"],
    ["VERIFICATION: PASS (all green)", "pass", "all green"],
    ["**VERIFICATION: PASS**", "pass", ""],
    ["notes\n> VERIFICATION: FAIL - quoted but outside code", "fail", "quoted but outside code"],
    ["- **VERIFICATION: PASS** - ok", "pass", "ok"],
    ["## VERIFICATION: FAIL", "fail", ""],
    ["  VERIFICATION:   PASS  \r\n", "pass", ""],
    ["Example:\n```\nVERIFICATION: FAIL\n```\nVERIFICATION: PASS", "pass", "Example:\n```\nVERIFICATION: FAIL\n```"],
    ["~~~~\nVERIFICATION: PASS\n~~~\nstill fenced VERIFICATION: FAIL\n~~~~\nVERIFICATION: FAIL - real", "fail", "real"],
  ])("accepts %j", (text, verdict, reason) => {
    const r = parseVerifierVerdict(text);
    expect(r).toEqual({ ok: true, verdict, reason });
  });

  it.each([
    ["no verdict", "all looks fine"],
    ["only inside a code block", "```\nVERIFICATION: PASS\n```"],
    ["after an unclosed fence", "```\nVERIFICATION: PASS"],
    ["two verdicts", "VERIFICATION: PASS\nVERIFICATION: FAIL"],
    ["the same verdict twice", "VERIFICATION: PASS\n\nVERIFICATION: PASS"],
    ["lower case", "verification: pass"],
    ["mixed case word", "VERIFICATION: Pass"],
    ["lower-case fail beside a pass", "VERIFICATION: PASS\nverification: fail"],
    ["trailing text without a separator", "VERIFICATION: PASS but lint fails"],
    ["PASSED", "VERIFICATION: PASSED"],
    ["glued dash", "VERIFICATION: PASS-ish"],
    ["no space after the colon", "VERIFICATION:PASS"],
    ["verdict inside prose", "I would say VERIFICATION: PASS overall"],
    ["empty", ""],
  ])("rejects %s with INVALID_VERDICT", (_name, text) => {
    const r = parseVerifierVerdict(text);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(isWorkflowError(r.error, "INVALID_VERDICT")).toBe(true);
      expect(r.error.message).toMatch(/^\[phasekit\] \[verifier\] /);
    }
  });

  it("names the lines of every verdict when there are several", () => {
    const r = parseVerifierVerdict("a\nVERIFICATION: PASS\nb\nVERIFICATION: FAIL");
    expect(!r.ok && r.error.message).toContain("lines 2, 4");
  });

  it("property: arbitrary text never throws and returns a well-formed outcome", () => {
    const piece = fc.constantFrom("VERIFICATION: PASS", "VERIFICATION: FAIL - x", "verification: pass", "```", "~~~", "\n", "\r\n", "**", "> ", " ", "(", ")", "PASS", ":", "-");
    const text = fc.oneof(fc.string({ unit: "binary", maxLength: 400 }), fc.array(fc.oneof(piece, fc.string({ maxLength: 5 })), { maxLength: 60 }).map((a) => a.join("")));
    fc.assert(
      fc.property(text, (t) => {
        const r = parseVerifierVerdict(t);
        if (r.ok) {
          expect(["pass", "fail"]).toContain(r.verdict);
          expect(r.reason.length).toBeLessThanOrEqual(2_000);
        } else expect(r.error.code).toBe("INVALID_VERDICT");
      }),
      { numRuns: RUNS },
    );
  });

  it("property: one canonical verdict line among lines that never look like one is always found", () => {
    const filler = fc.string({ maxLength: 40 }).filter((s) => !/verification|```|~~~|[\r\n]/i.test(s));
    fc.assert(
      fc.property(fc.array(filler, { maxLength: 8 }), fc.array(filler, { maxLength: 8 }), fc.boolean(), (before, after, pass) => {
        const line = pass ? "VERIFICATION: PASS" : "VERIFICATION: FAIL";
        const r = parseVerifierVerdict([...before, line, ...after].join("\n"));
        expect(r.ok && r.verdict).toBe(pass ? "pass" : "fail");
      }),
      { numRuns: RUNS },
    );
  });

  it("stays fast on a long adversarial line", () => {
    const t = `${"> ".repeat(20_000)}${" ".repeat(20_000)}VERIFICATION: PASS${" *".repeat(20_000)}x`;
    const started = performance.now();
    parseVerifierVerdict(t);
    expect(performance.now() - started).toBeLessThan(2_000);
  });
});
