/** The timeline's reading of a run's history: order, failed attempts by step, waits between steps, paging. */
import { mkdirSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runTimeline } from "../../src/cli/run-timeline.js";
import { openRunLog } from "../../src/store/run-log/run-log.js";
import { useTempRepos } from "../helpers/temp-repos.js";

const repo = useTempRepos("pk-timeline-");

describe("runTimeline", () => {
  it("orders steps by time, tells a wait of a second or more, and pages from the newest", async () => {
    const root = repo();
    const runDir = path.join(root, "ai_plan", "w");
    mkdirSync(runDir, { recursive: true });
    let t = Date.parse("2026-01-01T00:00:00Z");
    const log = await openRunLog({ runDir, now: () => t });
    await log.step("a", 1, () => ((t += 100), "a"));
    t += 50; // no wait worth telling
    await log.step("b", 2, () => ((t += 100), "b"));
    t += 4_000; // a pause, a crash, a gate
    await log.step("c", 3, () => ((t += 100), "c"));
    await log.close();
    const all = await runTimeline({ repoRoot: root }, "w", t);
    expect(all.items.map((x) => [x.step, x.waitMs ?? 0])).toEqual([["a", 0], ["b", 0], ["c", 4_000]]);
    expect(all.items[2]?.text).toBe("step c (attempt 1) completed in 100ms (after a wait of 4.0s)");
    const page = await runTimeline({ repoRoot: root }, "w", t, { limit: 2 });
    expect(page.items.map((x) => x.step)).toEqual(["b", "c"]);
    expect(page.page).toEqual({ offset: 1, limit: 2, total: 3 });
    expect((await runTimeline({ repoRoot: root }, "w", t, { step: "b" })).items.map((x) => x.step)).toEqual(["b"]);
  });
});
