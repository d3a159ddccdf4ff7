/**
 * The CLI's readers meet one hostile run among good ones: a segment planted huge (sparse), or a state delta
 * that does not fit. `list` shows every other run and marks the bad one unreadable with the typed error;
 * `show` of the bad one is a typed error naming the file, never "completed" from a history read past.
 */
import { describe, expect, it } from "vitest";
import { appendFileSync, readdirSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import path from "node:path";
import { runWorkflow } from "@phasekit/adapters-pi";
import { useTempRepos } from "../helpers/temp-repos.js";
import { json, phasekitInProcess } from "../cli/helpers/run-cli.js";

const repo = useTempRepos("pk-hostile-cli-");

interface Row {
  id: string;
  status: string;
  error: { code: string; message: string } | null;
}

async function twoRuns(root: string): Promise<string> {
  for (const target of ["good", "bad"]) {
    await runWorkflow({ repoRoot: root, target, toolName: "t" }, async (ctx) => ctx.step("a", { n: 1 }, () => "A"));
  }
  return path.join(root, "ai_plan", "bad", "runlog");
}

const headSegment = (runlog: string): string => path.join(runlog, readdirSync(runlog).filter((n) => n.endsWith(".seg")).sort().pop() as string);

describe("CLI readers and one hostile run", () => {
  for (const gib of [1.5, 5]) {
    it(`a ${gib} GB segment: list marks that run FILE_TOO_LARGE and shows the other; show is a typed error`, async () => {
      const root = repo();
      const runlog = await twoRuns(root);
      const seg = headSegment(runlog);
      rmSync(seg);
      writeFileSync(seg, "");
      truncateSync(seg, gib * 1024 * 1024 * 1024);
      const list = await phasekitInProcess(["list", "--json", "--repo", root]);
      expect(list.code, list.stderr).toBe(0);
      const rows = json<{ runs: Row[] }>(list.stdout, "phasekit.list/1").runs;
      expect(rows.find((r) => r.id === "good")?.status).toBe("completed");
      const bad = rows.find((r) => r.id === "bad");
      expect(bad).toMatchObject({ status: "unreadable", error: { code: "FILE_TOO_LARGE" } });
      expect(bad?.error?.message).toContain(seg);
      // show prints the run as unreadable with the typed error naming the file (as for a corrupt workflow.json), exit 1.
      const show = await phasekitInProcess(["show", "bad", "--repo", root]);
      expect(show.code).toBe(1);
      expect(show.stdout).not.toContain("completed");
      expect(show.stdout).toMatch(/status\s+unreadable/);
      expect(show.stdout).toContain("FILE_TOO_LARGE");
      expect(show.stdout).toContain("above the cap");
      expect(show.stdout).toContain(seg);
    });
  }

  it("a state delta that does not fit: list exits 0, the run is unreadable with CORRUPT_FILE naming the segment", async () => {
    const root = repo();
    const runlog = await twoRuns(root);
    const seg = headSegment(runlog);
    appendFileSync(seg, `{"t":"state","e":${Number(path.basename(seg, ".seg"))},"n":99,"d":1}\t[[["no","such","path"],1]]\n`);
    const list = await phasekitInProcess(["list", "--json", "--repo", root]);
    expect(list.code, list.stderr).toBe(0);
    const rows = json<{ runs: Row[] }>(list.stdout, "phasekit.list/1").runs;
    expect(rows.find((r) => r.id === "good")?.status).toBe("completed");
    const bad = rows.find((r) => r.id === "bad");
    expect(bad).toMatchObject({ status: "unreadable", error: { code: "CORRUPT_FILE" } });
    expect(bad?.error?.message).toContain(seg);
    const text = await phasekitInProcess(["list", "--repo", root]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/good\s+completed/);
    expect(text.stdout).toMatch(/bad\s+unreadable/);
  });
});
