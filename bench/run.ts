/**
 * `pnpm bench`: runs every bench suite (`packages/<pkg>/bench/*.bench.ts`), each of which measures a subject
 * against a baseline in the same run, and rewrites docs/benchmarks.md with the ratios.
 */
import { readdirSync, writeFileSync, existsSync } from "node:fs";
import { join, relative } from "node:path";
import { pathToFileURL } from "node:url";
import os from "node:os";
import type { BenchSuite, BenchRow } from "./harness.js";

const root = new URL("..", import.meta.url).pathname;
const filter = process.argv[2];

const files: string[] = [];
for (const pkg of readdirSync(join(root, "packages"))) {
  const dir = join(root, "packages", pkg, "bench");
  if (!existsSync(dir)) continue;
  for (const f of readdirSync(dir).sort()) if (f.endsWith(".bench.ts")) files.push(join(dir, f));
}
// Suites that measure peers live in the bench package (bench/suites), the only place their libraries are installed.
for (const f of readdirSync(join(root, "bench", "suites")).sort()) if (f.endsWith(".bench.ts")) files.push(join(root, "bench", "suites", f));

const sections: string[] = [];
for (const file of files) {
  if (filter && !file.includes(filter)) continue;
  const mod = (await import(pathToFileURL(file).href)) as { suite: BenchSuite };
  process.stderr.write(`bench: ${relative(root, file)}\n`);
  const rows: BenchRow[] = await mod.suite.run();
  const lines = [
    `## ${mod.suite.title}`,
    "",
    `Source: \`${relative(root, file)}\`. ${mod.suite.description}`,
    "",
    "| subject | baseline | subject per op | baseline per op | ratio (subject / baseline) | goal |",
    "| --- | --- | --- | --- | --- | --- |",
    ...rows.map(
      (r) =>
        `| ${r.subject} | ${r.baseline} | ${fmt(r.subjectNs, r.unit)} | ${fmt(r.baselineNs, r.unit)} | ${ratioText(r.ratio ?? r.subjectNs / r.baselineNs)} | ${r.goal ?? "report"}${r.met === undefined ? "" : r.met ? " ✅" : " ❌"} |`,
    ),
    "",
    ...(mod.suite.notes ?? []).flatMap((n) => [n, ""]),
  ];
  sections.push(lines.join("\n"));
  process.stdout.write(lines.join("\n") + "\n");
}

/** `0.52×`; a small ratio also says how many times faster (`0.0023× (440× faster)`). */
function ratioText(ratio: number): string {
  if (ratio === 0) return "0×";
  return ratio < 0.1 ? `${ratio.toFixed(4)}× (${(1 / ratio).toFixed(0)}× faster)` : `${ratio.toFixed(2)}×`;
}

function fmt(ns: number, unit: "ns" | "bytes" | "count" = "ns"): string {
  if (unit === "count") return ns.toLocaleString("en");
  if (unit === "bytes") return ns < 1024 * 1024 ? `${(ns / 1024).toFixed(1)} KiB` : `${(ns / 1024 / 1024).toFixed(2)} MiB`;
  if (ns < 1_000) return `${ns.toFixed(0)} ns`;
  if (ns < 1_000_000) return `${(ns / 1_000).toFixed(2)} µs`;
  return `${(ns / 1_000_000).toFixed(2)} ms`;
}

if (!filter) {
  const header = [
    "# Benchmarks",
    "",
    "Produced by `pnpm bench` (writes this file). Every figure is a median per operation, and every subject is",
    "reported as a ratio against a baseline measured in the same run on the same machine, so the ratios travel",
    "between machines better than the absolute times do.",
    "",
    `Last run: Node ${process.version}, ${os.cpus().length} × ${os.cpus()[0]?.model ?? "cpu"}, ${os.platform()}.`,
    "",
  ].join("\n");
  writeFileSync(join(root, "docs", "benchmarks.md"), header + "\n" + sections.join("\n"));
}
