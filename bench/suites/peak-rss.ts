/**
 * Peak RSS rows: a run of `steps` steps with outputs of about `bytes`, and loading it, each in its own child
 * process (rss-child.ts), against the median of three import-only children, judged against a 64 MiB budget.
 */
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { goalRow, type BenchRow } from "../harness.js";
import { tempDir } from "./contenders.js";
import { median } from "./interleave.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const RSS_CHILD = fileURLToPath(new URL("./rss-child.ts", import.meta.url));
const BUDGET = 64 * 1024 * 1024;

function rss(args: string[]): number {
  const out = execFileSync(process.execPath, ["--import", "tsx", "--conditions=@phasekit/source", RSS_CHILD, ...args], { cwd: ROOT, encoding: "utf8" });
  return Number(out.trim().split("\n").pop());
}

/**
 * The two peak-RSS goal rows for a run of `steps` steps with outputs of about `bytes` (`label` names the run);
 * with `unlike` (a label), a third row, report only: the same run with every output unlike the one before it
 * (stored whole, no delta).
 */
export function peakRssRows(steps: number, bytes: number, label: string, unlike?: string): BenchRow[] {
  const runDir = tempDir("rss");
  const base = median([rss(["import"]), rss(["import"]), rss(["import"])]);
  const run = rss(["run", runDir, String(steps), String(bytes)]);
  const load = rss(["load", runDir]);
  const rows = [
    goalRow(`peak RSS above import-only: ${label}`, "budget 64 MiB", run - base, BUDGET, "≤ 1.0×", 1, "bytes"),
    goalRow("peak RSS above import-only: loading it", "budget 64 MiB", load - base, BUDGET, "≤ 1.0×", 1, "bytes"),
  ];
  if (unlike === undefined) return rows;
  const whole = rss(["run", tempDir("rss-unlike"), String(steps), String(bytes), "unlike"]);
  return [...rows, { subject: `peak RSS above import-only: ${unlike}`, baseline: "budget 64 MiB", subjectNs: whole - base, baselineNs: BUDGET, goal: "report", unit: "bytes" }];
}
