/**
 * `phasekit ui` as a process: it prints the page's URL with this launch's token, serves the page and the API on
 * 127.0.0.1 only to requests carrying that token, refuses a foreign Host, and ends on SIGTERM.
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createReporter, runWorkflow } from "@phasekit/adapters-pi";
import { BIN } from "./helpers/run-cli.js";

const repo = mkdtempSync(path.join(tmpdir(), "pk-ui-"));
afterAll(() => rmSync(repo, { recursive: true, force: true }));

function get(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string; type: string }> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const req = http.get({ hostname: u.hostname, port: u.port, path: `${u.pathname}${u.search}`, headers }, (res) => {
      let body = "";
      res.setEncoding("utf8").on("data", (d: string) => (body += d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body, type: String(res.headers["content-type"]) }));
    });
    req.on("error", reject);
  });
}

describe("phasekit ui", () => {
  it("serves the shipped page and the runs on 127.0.0.1 to the printed token only; refuses another Host; exits on SIGTERM", async () => {
    await runWorkflow({ repoRoot: repo, target: "one", toolName: "t", createReporter: () => createReporter({ onChange: () => undefined }) }, (ctx) => ctx.step("s", {}, () => 1));
    const child = spawn(process.execPath, [BIN, "ui", "--port", "0", "--repo", repo], { stdio: ["ignore", "pipe", "pipe"] });
    const url = await new Promise<string>((resolve, reject) => {
      let out = "";
      child.stdout.setEncoding("utf8").on("data", (d: string) => {
        out += d;
        const m = /on (http:\/\/127\.0\.0\.1:\d+\/\?token=[A-Za-z0-9_-]{40,})/.exec(out);
        if (m) resolve(m[1] as string);
      });
      child.on("exit", () => reject(new Error(`ui exited early: ${out}`)));
    });
    const token = new URL(url).searchParams.get("token") as string;
    const origin = `${new URL(url).origin}/`;
    const auth = { "x-phasekit-token": token };
    // Without the token (or with another one) nothing is served, not even the page.
    for (const p of ["", "api/runs", "app.js"]) {
      expect((await get(`${origin}${p}`)).status, p).toBe(403);
      expect((await get(`${origin}${p}`, { "x-phasekit-token": `${token.slice(1)}x` })).status, p).toBe(403);
    }
    const page = await get(url);
    expect([page.status, page.type]).toEqual([200, "text/html; charset=utf-8"]);
    expect(page.body).toContain('<script type="module" src="/app.js">');
    expect(page.body).not.toMatch(/https?:\/\//); // nothing fetched from elsewhere
    const runs = JSON.parse((await get(`${origin}api/runs`, auth)).body) as { schema: string; runs: Array<{ id: string; status: string }> };
    expect(runs.schema).toBe("phasekit.list/1");
    expect(runs.runs.map((r) => [r.id, r.status])).toEqual([["one", "completed"]]);
    expect((await get(`${origin}api/runs/nope`, auth)).status).toBe(404);
    // Only bare run ids: a path-like id is refused before anything is read.
    for (const evil of ["..%2F..%2Fetc", "%2Ftmp", ".hidden", "%E0%A4%A"]) expect((await get(`${origin}api/runs/${evil}`, auth)).status, evil).toBe(400);
    expect((await get(url, { host: "evil.example:80" })).status).toBe(403);
    // The same port again: a typed error naming it (INVALID_OPTIONS for the port: exit 2, as every refused option value).
    const busy = spawnSync(process.execPath, [BIN, "ui", "--port", new URL(origin).port, "--repo", repo], { encoding: "utf8" });
    expect([busy.status, busy.stderr]).toEqual([2, `phasekit: port ${new URL(origin).port} on 127.0.0.1 is in use. Fix: pass another --port, or --port 0 for any free one\n`]);
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
  });
});
