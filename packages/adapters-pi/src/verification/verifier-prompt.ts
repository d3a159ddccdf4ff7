/**
 * The read-only verifier agent: the prompt that asks it to judge a step, and the parser of its answer.
 *
 * Verdict rules (strict on purpose: an unclear answer must never read as a pass):
 * - A verdict line is `VERIFICATION: PASS` or `VERIFICATION: FAIL`, in capitals, alone on its line. Markdown
 *   decoration around it is tolerated (`**…**`, a `>` quote, a list bullet, a heading mark).
 * - A reason may follow after a separator: `VERIFICATION: FAIL - tests break`, `— …`, `: …`, or `(…)`.
 *   Anything else after the word (`PASS but lint fails`, `PASSED`) makes the line malformed.
 * - A line that looks like a verdict in another case (`Verification: pass`) counts as a verdict line and is
 *   malformed: it cannot be ignored (it might be the real answer) nor trusted.
 * - Lines inside fenced code blocks are quotes or examples, not answers: they are ignored.
 * - Exactly one verdict line is required; zero, two or more, or a malformed one is INVALID_VERDICT.
 */
import { workflowError } from "@phasekit/core";
import type { WorkflowError } from "@phasekit/core";

/** What the verifier is told about one command that already ran. */
export interface VerifierCommandInfo {
  command: string;
  status?: "passed" | "cached" | "failed" | "not run";
  outputTail?: string;
}

/** Inputs of `composeVerifierPrompt`. */
export interface VerifierPromptInput {
  task: string;
  phase?: string;
  changesSummary: string;
  commands?: readonly (string | VerifierCommandInfo)[];
  /** Extra checks the verifier must make, one per entry. */
  criteria?: readonly string[];
}

/** A parsed verdict, or why the answer has none. */
export type VerifierVerdict = { ok: true; verdict: "pass" | "fail"; reason: string } | { ok: false; error: WorkflowError };

const MAX_REASON_CHARS = 2_000;
const MAX_OUTPUT_IN_PROMPT = 2_000;

// Leading decoration: quote marks, heading marks, a list bullet or number, opening emphasis or code ticks.
const LEAD = /^(?:\s*>)*\s*(?:#{1,6}\s+)?(?:[-*+]\s+|\d+[.)]\s+)?[*_`]*/;
const LOOKS_LIKE_VERDICT = /^verification\s*:\s*(?:pass|fail)\b/i;
const CANONICAL = /^VERIFICATION:[ \t]+(PASS|FAIL)(.*)$/;
// What may follow the word: closing emphasis, then nothing, a separated reason, or a reason in parentheses.
const REASON_AFTER_SEPARATOR = /^(?:[ \t]+[-—–]+[ \t]+|[ \t]*:[ \t]+)(\S.*)$/;
const REASON_IN_PARENS = /^[ \t]+\((.*)\)$/;
const FENCE = /^\s{0,3}(`{3,}|~{3,})/;

function fenced(block: string): string {
  return block.replace(/```/g, "``\u200b`");
}

function commandLines(commands: readonly (string | VerifierCommandInfo)[]): string[] {
  return commands.map((c) => {
    const info = typeof c === "string" ? { command: c } : c;
    const head = `- \`${info.command}\`${info.status === undefined ? "" : ` — ${info.status}`}`;
    if (!info.outputTail) return head;
    return `${head}\n  last output:\n\`\`\`\n${fenced(info.outputTail.slice(-MAX_OUTPUT_IN_PROMPT))}\n\`\`\``;
  });
}

/** The prompt of a read-only verifier agent, ending with the exact answer format the parser accepts. */
export function composeVerifierPrompt(input: VerifierPromptInput): string {
  const parts = [
    "You are a read-only verifier. Judge whether the work below is complete and correct.",
    "Do not edit, create or delete files, do not commit, and do not run commands that change the workspace; read files and run read-only checks only.",
    "",
    `## Task\n${input.task.trim()}`,
  ];
  if (input.phase) parts.push("", `## Phase\n${input.phase}`);
  parts.push("", `## Changes\n${input.changesSummary.trim() || "(no summary given)"}`);
  if (input.commands && input.commands.length > 0) parts.push("", "## Checks", ...commandLines(input.commands));
  if (input.criteria && input.criteria.length > 0) parts.push("", "## Also check", ...input.criteria.map((c) => `- ${c}`));
  parts.push(
    "",
    "## Answer",
    "Explain briefly what you checked. Then end with exactly one verdict line, alone on its line, in capitals:",
    "VERIFICATION: PASS",
    "or",
    "VERIFICATION: FAIL - <the main reason>",
    "Write the verdict line once only; do not quote it elsewhere in your answer.",
  );
  return parts.join("\n");
}

interface VerdictLine {
  line: number;
  text: string;
  verdict: { word: "PASS" | "FAIL"; reason: string } | null;
}

// A loop, not /[\s*_`]+$/: that regex retries from every start position, quadratic on a long " * * *" tail.
function stripTrailingDecoration(text: string): string {
  let end = text.length;
  while (end > 0 && /[\s*_`]/.test(text.charAt(end - 1))) end--;
  return text.slice(0, end);
}

function readVerdict(text: string): VerdictLine["verdict"] {
  const m = CANONICAL.exec(text);
  if (m === null) return null;
  const tail = stripTrailingDecoration((m[2] ?? "").replace(/^[*_`]+/, ""));
  if (tail === "") return { word: m[1] as "PASS" | "FAIL", reason: "" };
  const reason = REASON_AFTER_SEPARATOR.exec(tail)?.[1] ?? REASON_IN_PARENS.exec(tail)?.[1];
  return reason === undefined ? null : { word: m[1] as "PASS" | "FAIL", reason: reason.trim() };
}

function verdictLines(lines: readonly string[]): VerdictLine[] {
  const found: VerdictLine[] = [];
  let fence: string | undefined;
  lines.forEach((raw, i) => {
    const f = FENCE.exec(raw);
    if (f?.[1] !== undefined) {
      const mark = f[1];
      if (fence === undefined) fence = mark;
      else if (mark[0] === fence[0] && mark.length >= fence.length && raw.trim() === mark) fence = undefined;
      return;
    }
    if (fence !== undefined) return;
    const text = raw.replace(LEAD, "").trim();
    if (LOOKS_LIKE_VERDICT.test(text)) found.push({ line: i + 1, text, verdict: readVerdict(text) });
  });
  return found;
}

function invalid(message: string, value: unknown, hint: string): VerifierVerdict {
  return { ok: false, error: workflowError("verifier", "INVALID_VERDICT", message, { field: "verdict", value, hint }) };
}

function clip(text: string): string {
  return text.length <= MAX_REASON_CHARS ? text : `${text.slice(0, MAX_REASON_CHARS - 1)}…`;
}

/** Reads the verifier's answer; see the module comment for the rules. Never throws. */
export function parseVerifierVerdict(text: string): VerifierVerdict {
  const lines = String(text).split(/\r\n|\r|\n/);
  const found = verdictLines(lines);
  const hint = "answer with exactly one line `VERIFICATION: PASS` or `VERIFICATION: FAIL - <reason>`";
  if (found.length === 0) return invalid("the answer has no VERIFICATION: PASS or VERIFICATION: FAIL line.", null, hint);
  if (found.length > 1) {
    return invalid(`the answer has ${found.length} verdict lines (lines ${found.map((f) => f.line).join(", ")}); exactly one is required.`, found.map((f) => f.text), hint);
  }
  const only = found[0];
  if (only?.verdict === null || only === undefined) {
    return invalid(`line ${only?.line ?? 0} is not a well-formed verdict: ${JSON.stringify(only?.text.slice(0, 200))}.`, only?.text, hint);
  }
  const verdict = only.verdict.word === "PASS" ? "pass" : "fail";
  const inline = only.verdict.reason;
  const rest = lines.filter((_, i) => i !== only.line - 1).join("\n").trim();
  return { ok: true, verdict, reason: clip(inline || rest) };
}
