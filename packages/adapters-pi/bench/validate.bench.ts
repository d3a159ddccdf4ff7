/**
 * `phasekit validate` on 1,000 definition folders (2,000 files, in chains of 20 nested references): the loader (realpath + stat checks, YAML parse
 * with source positions, front matter, core's compile of the whole set) against the floor of reading the same
 * files and parsing them with the yaml package's plain `parse`.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { parse } from "yaml";
import type { BenchSuite } from "../../../bench/harness.js";
import { medians } from "../../../bench/harness.js";
import { loadDefinitionFolders } from "../src/definitions/folders.js";

const N = 1_000;

export const suite: BenchSuite = {
  title: "validate 1,000 definition folders",
  description:
    "loadDefinitionFolders over 1,000 workflow folders (workflow.yaml + one phase file each, in chains of 20 where each workflow references the previous one) vs reading the same 2,000 files and YAML-parsing them without positions or checks.",
  async run() {
    const root = mkdtempSync(path.join(tmpdir(), "phasekit-bench-defs-"));
    for (let i = 0; i < N; i++) {
      mkdirSync(path.join(root, `w${i}`));
            // Chains of 20 (each workflow references the previous one): nesting stays under core's MAX_NESTING.
      writeFileSync(path.join(root, `w${i}`, "workflow.yaml"), `name: "W ${i}"\nphases:\n  - a.md\n${i % 20 > 0 ? `  - subworkflow: w${i - 1}\n` : ""}`);
      writeFileSync(path.join(root, `w${i}`, "a.md"), `---\nid: a\nname: A${i}\nemoji: "🧪"\n---\nDo ${i}.\n`);
    }
    const m = await medians(
      {
        subject: () => {
          const r = loadDefinitionFolders([root]);
          if (r.problems.length > 0 || r.registry.workflows.size !== N) throw new Error("bench fixture did not load");
        },
        baseline: () => {
          for (const d of readdirSync(root)) {
            parse(readFileSync(path.join(root, d, "workflow.yaml"), "utf8"));
            const md = readFileSync(path.join(root, d, "a.md"), "utf8");
            parse(md.slice(4, md.indexOf("\n---", 4)));
          }
        },
      },
      { time: 3_000, iterations: 5 },
    );
    return [{ subject: "loadDefinitionFolders", baseline: "read + yaml.parse", subjectNs: m["subject"] as number, baselineNs: m["baseline"] as number, goal: "report" }];
  },
};
