/**
 * The inspector's HTTP API in this process: nothing is served without the launch's token (and a write needs it
 * in a header), a run page opens the run's history a fixed number of times whatever its step count, a damaged
 * journal leaves the rest of the page readable, a step's output is paged, and the control actions go through
 * the CLI's own implementation (the page offers only the actions it carries out).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createReporter, requestPause, runWorkflow } from "@phasekit/adapters-pi";
import { readRunLog } from "../../src/store/run-log/reader.js";
import { startInspector, type Inspector } from "../../src/cli/ui-server.js";
import { phasekitInProcess } from "./helpers/run-cli.js";

vi.mock("../../src/store/run-log/reader.js", async (importOriginal) => {
  const real = await importOriginal<typeof import("../../src/store/run-log/reader.js")>();
  return { ...real, readRunLog: vi.fn(real.readRunLog) };
});

const TOKEN = "t0ken-for-tests";
const quiet = () => createReporter({ onChange: () => undefined });
let repo: string;
let inspector: Inspector;

beforeAll(async () => {
  repo = mkdtempSync(path.join(tmpdir(), "pk-api-"));
  for (const [slug, n] of [["ten", 10], ["sixty", 60]] as const) {
    await runWorkflow({ repoRoot: repo, target: slug, toolName: "t", createReporter: quiet }, async (ctx) => {
      for (let i = 0; i < n; i++) await ctx.step(`s${i}`, { i }, () => ({ i }));
    });
  }
  await runWorkflow({ repoRoot: repo, target: "big", toolName: "t", createReporter: quiet }, async (ctx) =>
    ctx.step("blob", { want: "big" }, () => ({ rows: Array.from({ length: 3000 }, (_, i) => ({ i, text: `row ${i} 🧪` })) })),
  );
  await runWorkflow({ repoRoot: repo, target: "held", toolName: "t", createReporter: quiet }, async (ctx) => {
    await ctx.step("a", {}, () => 1);
    await requestPause({ repoRoot: repo, target: "held", reason: "wait" });
    return ctx.step("b", {}, () => 2);
  });
  await runWorkflow({ repoRoot: repo, target: "broke", toolName: "t", createReporter: quiet }, async (ctx) =>
    ctx.step("fails", {}, () => {
      throw new Error("boom");
    }),
  ).catch(() => undefined);
  inspector = await startInspector({ roots: { repoRoot: repo }, defDirs: [], port: 0, token: TOKEN });
}, 60_000);

afterAll(async () => {
  await inspector?.close();
  rmSync(repo, { recursive: true, force: true });
});

const origin = () => new URL(inspector.url).origin;
async function get(p: string, headers: Record<string, string> = { "x-phasekit-token": TOKEN }): Promise<{ status: number; body: any }> {
  const res = await fetch(`${origin()}${p}`, { headers });
  return { status: res.status, body: await res.json() };
}
async function post(p: string, body: unknown, headers: Record<string, string> = { "x-phasekit-token": TOKEN, "content-type": "application/json" }): Promise<{ status: number; body: any }> {
  const res = await fetch(`${origin()}${p}`, { method: "POST", headers, body: JSON.stringify(body) });
  return { status: res.status, body: await res.json() };
}

describe("the token", () => {
  it("nothing is served without this launch's token; the URL, a header or the cookie the page got carry it", async () => {
    expect(inspector.url).toBe(`${origin()}/?token=${TOKEN}`);
    for (const p of ["/", "/app.js", "/api/runs", "/api/runs/ten", "/api/runs/ten/steps/s0/output"]) {
      expect((await fetch(`${origin()}${p}`)).status, p).toBe(403);
      expect((await fetch(`${origin()}${p}`, { headers: { "x-phasekit-token": "wrong" } })).status, p).toBe(403);
      expect((await fetch(`${origin()}${p}?token=${TOKEN}x`)).status, p).toBe(403);
    }
    const page = await fetch(inspector.url);
    expect(page.status).toBe(200);
    const cookie = (page.headers.get("set-cookie") ?? "").split(";")[0] as string;
    expect(cookie).toBe(`phasekit-token-${new URL(origin()).port}=${TOKEN}`);
    expect((await fetch(`${origin()}/api/runs`, { headers: { cookie } })).status).toBe(200);
    expect((await get("/api/runs")).status).toBe(200);
  });

  it("a write needs the token in its header (a cookie alone is not enough) and a JSON body", async () => {
    const cookie = `phasekit-token-${new URL(origin()).port}=${TOKEN}`;
    expect((await post("/api/runs/ten/actions/pause", {}, { cookie, "content-type": "application/json" })).status).toBe(403);
    expect((await post("/api/runs/ten/actions/pause", {}, { "x-phasekit-token": TOKEN, "content-type": "text/plain" })).status).toBe(415);
    expect((await post("/api/runs/ten/actions/explode", {})).status).toBe(404);
    expect((await post("/api/runs/..%2Fx/actions/pause", {})).status).toBe(400);
  });
});

describe("the run page", () => {
  it("opens the run's history once per request, however many steps the run has (each opening scans it)", async () => {
    const opens = vi.mocked(readRunLog);
    const count = async (id: string) => {
      opens.mockClear();
      const r = await get(`/api/runs/${id}`);
      expect(r.status).toBe(200);
      return opens.mock.calls.length;
    };
    const ten = await count("ten");
    const sixty = await count("sixty");
    expect(ten).toBe(1);
    expect(sixty).toBe(1);
  });

  it("pages the steps: the newest page by default, any page by stepOffset; verdicts only for the steps shown", async () => {
    const last = (await get("/api/runs/sixty?stepLimit=20")).body;
    expect(last.stepsPage).toEqual({ offset: 40, limit: 20, total: 60, before: expect.stringMatching(/~40$/), after: null });
    expect(last.steps.map((s: { stepId: string }) => s.stepId)).toEqual(Array.from({ length: 20 }, (_, i) => `s${40 + i}`));
    const first = (await get("/api/runs/sixty?stepLimit=20&stepOffset=0")).body;
    expect(first.steps[0].stepId).toBe("s0");
    expect(first.steps[0].verdict.decision).toBe("reuse-if-same-input");
    expect((await get("/api/runs/sixty?stepOffset=-1")).status).toBe(400);
  });

  it("a damaged history: the run is shown unreadable with its steps' error named, not a failed page (and `show` says so too, exit 1)", async () => {
    await runWorkflow({ repoRoot: repo, target: "torn", toolName: "t", createReporter: quiet }, async (ctx) => ctx.step("a", {}, () => 1));
    const seg = path.join(repo, "ai_plan", "torn", "runlog", "0000000001.seg");
    // A line in the middle of the history that is not JSON: a damage no reader may take for a torn tail.
    const text = readFileSync(seg, "latin1");
    const cut = text.indexOf("\n", 100) + 1;
    writeFileSync(seg, `${text.slice(0, cut)}not json\n${text.slice(cut)}`, "latin1");
    const r = await get("/api/runs/torn");
    expect(r.status).toBe(200);
    expect(r.body.summary).toMatchObject({ id: "torn", status: "unreadable", error: { code: "CORRUPT_FILE" } });
    expect(r.body.stepsError).toMatchObject({ code: "CORRUPT_FILE", message: expect.stringContaining(seg) });
    expect(r.body.stepsError.message).not.toMatch(/^\[/);
    const show = await phasekitInProcess(["show", "torn", "--repo", repo]);
    expect(show.code).toBe(1);
    expect(show.stdout).toContain(`steps    cannot be read: ${seg}`);
  });

  it("a damaged journal is named in its place; the run and its steps are still shown", async () => {
    writeFileSync(path.join(repo, "ai_plan", "ten", "journal.ndjson"), '{"seq": 1, "gen\n{"seq": 2}\n');
    const r = await get("/api/runs/ten");
    expect(r.status).toBe(200);
    expect(r.body.summary.id).toBe("ten");
    expect(r.body.steps).toHaveLength(10);
    expect(r.body.journalError.message).toContain("journal.ndjson");
    expect(r.body.journalError.message).not.toMatch(/^\[/);
  });
});

describe("payloads", () => {
  it("a step's output is pretty JSON in pages; its input is not kept, only its fingerprint", async () => {
    const first = await get("/api/runs/big/steps/blob/output?limit=1000");
    expect(first.status).toBe(200);
    expect(first.body.input).toEqual({ recorded: false, fingerprint: expect.stringMatching(/^v1:sha256:/) });
    const out = first.body.output;
    expect(out.text).toHaveLength(1000);
    expect(out.nextOffset).toBe(1000);
    let text = out.text as string;
    for (let next = out.nextOffset as number | null; next !== null; ) {
      const page = await get(`/api/runs/big/steps/blob/output?offset=${next}`);
      text += page.body.output.text;
      next = page.body.output.nextOffset;
    }
    expect(text.length).toBe(out.totalChars);
    expect(JSON.parse(text).rows[2999]).toEqual({ i: 2999, text: "row 2999 🧪" });
    expect(text).toContain('\n  "rows": [\n');
    expect((await get("/api/runs/big/steps/nope/output")).status).toBe(404);
    expect((await get("/api/runs/big/steps/blob/output?offset=-1")).status).toBe(400);
  });
});

describe("actions", () => {
  it("are the CLI's: a finished run refuses them with the CLI's typed error; a paused run is cancelled under its lock", async () => {
    const pause = await post("/api/runs/sixty/actions/pause", { reason: "x" });
    expect(pause.status).toBe(400);
    expect(pause.body.error.code).toBe("RUN_FINISHED");
    const cancelDone = await post("/api/runs/sixty/actions/cancel", {});
    expect([cancelDone.status, cancelDone.body.error.code, cancelDone.body.error.message]).toEqual([400, "NOT_RUNNING", "run sixty is already completed."]);
    expect((await get("/api/runs/held")).body.summary.status).toBe("paused");
    const cancel = await post("/api/runs/held/actions/cancel", { reason: "not needed" });
    expect(cancel.status).toBe(200);
    expect(cancel.body).toMatchObject({ schema: "phasekit.control/1", id: "held", action: "cancel", reason: "not needed", text: "run held cancelled: not needed" });
    const after = (await get("/api/runs/held")).body;
    expect([after.summary.status, after.metadata.failureReason, after.metadata.currentTool]).toEqual(["cancelled", "not needed", "phasekit-cli"]);
    expect((await post("/api/runs/nope/actions/stop", {})).status).toBe(404);
  });

  it("the page offers exactly the actions the server carries out: none for a finished run, cancel for a paused or failed one", async () => {
    const offered = async (id: string) => ((await get(`/api/runs/${id}`)).body as { actions: string[] }).actions;
    expect(await offered("ten")).toEqual([]);
    const broke = (await get("/api/runs/broke")).body;
    expect([broke.summary.status, broke.actions]).toEqual(["failed", ["cancel"]]);
    // Every action offered is carried out, and the run then offers none.
    for (const action of broke.actions) expect((await post(`/api/runs/broke/actions/${action}`, {})).status).toBe(200);
    expect(await offered("broke")).toEqual([]);
  });
});

describe("live updates", () => {
  it("a run page's event stream says `changed` when the run's files change; closing the inspector ends open streams", async () => {
    const own = await startInspector({ roots: { repoRoot: repo }, defDirs: [], port: 0, token: TOKEN });
    const res = await fetch(`${own.origin}api/runs/ten/events`, { headers: { "x-phasekit-token": TOKEN } });
    expect([res.status, res.headers.get("content-type")]).toEqual([200, "text/event-stream; charset=utf-8"]);
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let seen = "";
    const until = async (text: string) => {
      while (!seen.includes(text)) {
        const chunk = await reader.read();
        if (chunk.done) throw new Error(`stream ended before ${JSON.stringify(text)}: ${seen}`);
        seen += decoder.decode(chunk.value);
      }
    };
    await until(": watching");
    writeFileSync(path.join(repo, "ai_plan", "ten", "note.txt"), "a change");
    await until("event: changed");
    await own.close();
    expect((await reader.read().catch(() => ({ done: true }))).done).toBe(true);
    expect((await fetch(`${origin()}/api/runs/ten/events`)).status).toBe(403);
    expect((await get("/api/runs/nope/events")).status).toBe(404);
  });

  it("answers a bad query with the typed error naming the field, its value and a hint", async () => {
    const bad = await get("/api/runs/ten?stepLimit=-2");
    expect(bad).toMatchObject({ status: 400, body: { error: { code: "INVALID_OPTIONS", message: expect.stringContaining("stepLimit"), hint: expect.any(String) } } });
    const badTimeline = await get("/api/runs/ten/timeline?offset=x");
    expect(badTimeline).toMatchObject({ status: 400, body: { error: { code: "INVALID_OPTIONS", message: expect.stringContaining('offset must be a whole number ≥ 0, not "x"'), hint: expect.any(String) } } });
  });
});
