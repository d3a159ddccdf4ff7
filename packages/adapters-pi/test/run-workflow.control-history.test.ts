/**
 * Pause and stop requests belong to the run's history: one filed during a run's last step ends with that run and
 * never pauses or stops a run re-entered later (`reenter: true`), while one filed for the re-entered run, or a
 * stop filed for a paused run, still takes effect.
 */
import { afterEach, describe, expect, it } from "vitest";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { runWorkflow } from "../src/run/run-workflow.js";
import { requestPause, requestStop } from "../src/run/control-requests.js";
import { controlFile, newControlRequest, readControlRequest, writeControlRequest } from "../src/store/control-signals.js";
import type { RunContext } from "../src/run/context.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function setup(slug: string): { repoRoot: string; slug: string; runDir: string } {
  const repoRoot = mkdtempSync(path.join(tmpdir(), "pk-control-history-"));
  dirs.push(repoRoot);
  return { repoRoot, slug, runDir: path.join(repoRoot, "ai_plan", slug) };
}

type Body = (ctx: RunContext) => Promise<string>;
const run = (repoRoot: string, slug: string, body: Body, reenter = false) => runWorkflow({ repoRoot, target: slug, toolName: "history-test", reenter }, body);

describe("control requests belong to the run's history", () => {
  for (const signal of ["pause", "stop"] as const) {
    it(`a ${signal} filed during the last step ends with that run: the re-entered run is not ${signal === "pause" ? "paused" : "stopped"}`, async () => {
      const { repoRoot, slug, runDir } = setup(`late-${signal}`);
      const first = await run(repoRoot, slug, async (ctx) => {
        await ctx.step("a", 1, async () => "a");
        return ctx.step("last", 2, async () => {
          const ask = signal === "pause" ? requestPause : requestStop;
          await ask({ repoRoot, target: slug, reason: "filed during the last step" });
          return "last";
        });
      });
      expect(first.status).toBe("completed");
      // The run that ended took its leftover request with it.
      expect.soft(await readControlRequest(runDir)).toEqual({ ok: true, request: null });

      const again = await run(repoRoot, slug, async (ctx) => {
        await ctx.step("a", 1, async () => "a");
        return ctx.step("more", 3, async () => "more");
      }, true);
      expect(again).toMatchObject({ status: "completed", result: "more" });
    });
  }

  it("a late request stamped before the run ended (its filer checked, then wrote after the run ended) is cleared, never honoured", async () => {
    const { repoRoot, slug, runDir } = setup("stalled-filer");
    const first = await run(repoRoot, slug, async (ctx) => ctx.step("a", 1, async () => "a"));
    expect(first.status).toBe("completed");
    const ended = first.metadata?.generation ?? -1;
    expect(ended).toBeGreaterThan(0);
    const again = await run(repoRoot, slug, async (ctx) => {
      await ctx.step("a", 1, async () => "a");
      // The stalled filer's write lands now, stamped with the generation it saw while the first run was running.
      await writeControlRequest(runDir, newControlRequest("pause", "stalled", undefined, ended - 1));
      return ctx.step("more", 3, async () => "more");
    }, true);
    expect(again).toMatchObject({ status: "completed", result: "more" });
    expect(existsSync(controlFile(runDir, "pause"))).toBe(false);
  });

  it("a request left behind by a run that ended (it crashed before clearing it) is cleared when the run is re-entered", async () => {
    const { repoRoot, slug, runDir } = setup("left-behind");
    const first = await run(repoRoot, slug, async (ctx) => ctx.step("a", 1, async () => "a"));
    const ended = first.metadata?.generation ?? -1;
    await writeControlRequest(runDir, newControlRequest("stop", "left behind", undefined, ended - 1));
    const again = await run(repoRoot, slug, async (ctx) => {
      expect(existsSync(controlFile(runDir, "stop"))).toBe(false);
      return ctx.step("more", 3, async () => "more");
    }, true);
    expect(again).toMatchObject({ status: "completed", result: "more" });
  });

  it("a request filed for the re-entered run itself takes effect", async () => {
    const { repoRoot, slug } = setup("reentered-stop");
    expect((await run(repoRoot, slug, async (ctx) => ctx.step("a", 1, async () => "a"))).status).toBe("completed");
    const again = await run(repoRoot, slug, async (ctx) => {
      await ctx.step("b", 2, async () => {
        await requestStop({ repoRoot, target: slug, reason: "stop the re-entered run" });
        return "b";
      });
      return ctx.step("c", 3, async () => "c");
    }, true);
    expect(again).toMatchObject({ status: "cancelled", reason: "stop the re-entered run" });
  });

  it("a stop filed for a paused run still ends its next resume cancelled", async () => {
    const { repoRoot, slug } = setup("paused-then-stopped");
    const paused = await run(repoRoot, slug, async (ctx) => {
      await ctx.step("a", 1, async () => {
        await requestPause({ repoRoot, target: slug, reason: "break" });
        return "a";
      });
      return ctx.step("b", 2, async () => "b");
    });
    expect(paused.status).toBe("paused");
    await requestStop({ repoRoot, target: slug, reason: "give up" });
    const resumed = await run(repoRoot, slug, async (ctx) => ctx.step("b", 2, async () => "b"));
    expect(resumed).toMatchObject({ status: "cancelled", reason: "give up" });
  });
});
