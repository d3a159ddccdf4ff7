/**
 * docs/cli.md's transcripts are real: every ```console block there starting with `$ phasekit …` is run here, in
 * order, against the fixture repository (with `--repo` and `--defs` added; `main()` in this process, the same
 * code the bin runs), and must print what the doc shows
 * once times, pids, temp paths, durations and ages are normalized. PHASEKIT_UPDATE_DOCS=1 rewrites the blocks.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFS, BROKEN_DEFS, fixtureRepo, type FixtureRepo } from "./helpers/fixture-runs.js";
import { phasekitInProcess } from "./helpers/run-cli.js";

const DOC = fileURLToPath(new URL("../../../../docs/cli.md", import.meta.url));
const BLOCK = /```console\n\$ (phasekit[^\n]*)\n([\s\S]*?)```/g;
let fx: FixtureRepo;
beforeAll(async () => {
  fx = await fixtureRepo();
}, 60_000);
afterAll(() => fx?.close());

/** Splits a doc command line into argv (single or double quotes); `./workflows` and `./broken` are the fixtures. */
function argv(line: string): string[] {
  const words = [...line.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3] ?? "").slice(1);
  return words.map((w) => (w === "./workflows" ? DEFS : w === "./broken" ? BROKEN_DEFS : w));
}

function normalize(text: string): string {
  return text
    .replaceAll(fx.repo, "~/repo")
    .replaceAll(BROKEN_DEFS, "./broken")
    .replaceAll(DEFS, "./workflows")
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/g, "2026-11-23T10:00:00.000Z")
    .replace(/pid \d+/g, "pid 4242")
    .replace(/on host [^)\s]+/g, "on host box")
    .replace(/"pid": \d+/g, '"pid": 4242')
    .replace(/"host": "[^"]*"/g, '"host": "box"')
    .replace(/"token": "[0-9a-f]+"/g, '"token": "…"')
    .replace(/"ageMs": \d+/g, '"ageMs": 1000')
    .replace(/"(startedAt|updatedAt|finishedAt)": \d{13}/g, '"$1": 1795000000000')
    .replace(/\b\d+ms\b/g, "12ms")
    .replace(/\b\d{1,2}s( ago)?\b/g, "1s$1");
}
const squash = (s: string) => s.split("\n").map((l) => l.replace(/\s+/g, " ").trimEnd()).join("\n").trim();

async function transcript(line: string): Promise<string> {
  const r = await phasekitInProcess([...argv(line), "--repo", fx.repo, "--defs", DEFS]);
  const out = normalize(r.stdout + r.stderr);
  return `${out}${out.endsWith("\n") || out === "" ? "" : "\n"}${r.code === 0 ? "" : `[exit ${r.code}]\n`}`;
}

describe("docs/cli.md transcripts", () => {
  it("each block prints what the doc shows", async () => {
    const doc = readFileSync(DOC, "utf8");
    const blocks = [...doc.matchAll(BLOCK)];
    expect(blocks.length).toBeGreaterThan(10);
    if (process.env["PHASEKIT_UPDATE_DOCS"] === "1") {
      const outputs: string[] = [];
      for (const [, line] of blocks) outputs.push(await transcript(line as string));
      let n = 0;
      writeFileSync(DOC, doc.replace(BLOCK, (_all, line: string) => `\`\`\`console\n$ ${line}\n${outputs[n++] ?? ""}\`\`\``));
      return;
    }
    for (const [, line, shown] of blocks) expect(squash(await transcript(line as string)), line).toBe(squash(shown as string));
  });
});
