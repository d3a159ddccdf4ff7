/**
 * Only the fingerprint rows of the run-log goals suite, printed as table rows (a minute instead of the whole
 * suite): `pnpm exec tsx --conditions=@phasekit/source bench/fingerprint-rows.ts`.
 */
import { fingerprints } from "./suites/run-log-goals.bench.js";

const fmt = (ns: number): string => (ns < 1e6 ? `${(ns / 1e3).toFixed(2)} µs` : `${(ns / 1e6).toFixed(2)} ms`);
for (const r of await fingerprints()) {
  const verdict = r.met === undefined ? "" : r.met ? " ✅" : " ❌";
  process.stdout.write(`| ${r.subject} | ${r.baseline} | ${fmt(r.subjectNs)} | ${fmt(r.baselineNs)} | ${(r.subjectNs / r.baselineNs).toFixed(2)}× | ${r.goal ?? "report"}${verdict} |\n`);
}
