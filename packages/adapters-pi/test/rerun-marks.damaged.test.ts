/**
 * A rerun mark in a run's history that is not one is damage, reported as a damaged commit record is
 * (engine/record-issue.ts `damagedRecord`): CORRUPT_FILE naming the segment, the byte and the field, for a
 * reader, for the run's next holder and for `phasekit show`. Skipped, it marked nothing: the steps a person asked
 * to run again were reused without a word. A spend that is not one is damage the same way.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { createFsPlanStore, createReporter, runWorkflow } from "../src/index.js";
import { RERUN_EVENT } from "../src/engine/reuse-decision.js";
import { RERUN_SPENT_EVENT } from "../src/engine/rerun-spent.js";
import { openRunLog } from "../src/store/run-log/run-log.js";
import { phasekitInProcess } from "./cli/helpers/run-cli.js";
import { useTempRepos } from "./helpers/temp-repos.js";
import type { JsonValue } from "../src/io/plain-json.js";

const repo = useTempRepos("pk-rerun-damaged-");
const quiet = () => createReporter({ onChange: () => undefined });

function run(root: string, effects: string[], reenter = false) {
  return runWorkflow({ repoRoot: root, target: "r", toolName: "t", reenter, createReporter: quiet }, async (ctx) => {
    for (const id of ["a", "b", "c"]) await ctx.step(id, { id }, () => (effects.push(id), id));
    return "done";
  });
}

/** Appends `data` as an event `name` of run r's history, as an edit, a bit flip or a newer version could leave it. */
async function plant(root: string, name: string, data: JsonValue): Promise<void> {
  const log = await openRunLog({ runDir: path.join(root, "ai_plan", "r") });
  await log.event(name, data);
  await log.close();
}

/** `value` as the run log writes it (canonical: keys sorted). */
const canonical = (value: JsonValue): string => JSON.stringify(value, (_k, v: unknown) => (v !== null && typeof v === "object" && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : 1))) : v));

const CASES: Array<[string, string, JsonValue, string]> = [
  ["a mark whose keys are no list", RERUN_EVENT, { from: "b", keys: "b", at: "2026-01-02T03:04:05.000Z" }, "keys"],
  ["a mark without from", RERUN_EVENT, { keys: ["b", "c"] }, "from"],
  ["a mark naming a key that is no string", RERUN_EVENT, { from: "b", keys: ["b", 7] }, "keys[1]"],
  ["a spend whose keys are no list", RERUN_SPENT_EVENT, { keys: null }, "keys"],
];

describe("a damaged rerun mark on the fs store", () => {
  it.each(CASES)("%s: CORRUPT_FILE naming the segment, byte and field, for a reader, the next run and phasekit show", async (_name, event, data, field) => {
    const root = repo();
    await run(root, []);
    await plant(root, event, data);
    const damaged = { code: "CORRUPT_FILE", details: { file: expect.stringMatching(/runlog[/\\]\d+\.seg$/), offset: expect.any(Number), field } };

    const store = createFsPlanStore({ repoRoot: root });
    try {
      const error = (await (await store.checkpoints("r", { now: () => new Date() })).records().catch((e: unknown) => e)) as { details: { file: string; offset: number } };
      expect(error).toMatchObject(damaged);
      // The byte it names is where the damaged record's data starts.
      expect(readFileSync(error.details.file).subarray(error.details.offset).toString("utf8").startsWith(canonical(data))).toBe(true);
    } finally {
      await store.close();
    }

    const effects: string[] = [];
    await expect(run(root, effects, true)).rejects.toMatchObject(damaged);
    expect(effects).toEqual([]);

    const shown = await phasekitInProcess(["--repo", root, "--json", "show", "r"]);
    expect(shown.code).toBe(1);
    expect(JSON.parse(shown.stderr)).toMatchObject({ error: { code: "CORRUPT_FILE" } });
  });
});
