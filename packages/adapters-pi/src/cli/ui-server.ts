/**
 * The inspector: a small HTTP server on 127.0.0.1 serving the static page shipped in the package (`ui/`, no
 * build step, nothing fetched from elsewhere) and a read-only JSON API over the same run views as the CLI.
 * Requests whose Host is not this loopback address are refused, so a web page cannot reach it through DNS
 * rebinding; nothing in the API writes.
 */
import { readFile } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { migrateState, workflowError } from "@phasekit/core";
import { loadDefinitionFolders } from "../definitions/folders.js";
import { validateSlug } from "../io/plan-paths.js";
import { buildDiagram, toMermaid } from "./diagram.js";
import { JSON_SCHEMAS } from "./io.js";
import { listRuns, readStepRecords, runDetail, runJournal, locateRun, type Roots } from "./run-view.js";
import { stepVerdict } from "./step-verdict.js";

/** Options of `startInspector`. */
export interface InspectorOptions {
  roots: Roots;
  defDirs: readonly string[];
  /** 0 picks a free port. */
  port: number;
  now?: () => Date;
}

/** A running inspector. */
export interface Inspector {
  url: string;
  close(): Promise<void>;
}

const ASSETS: Record<string, { file: string; type: string }> = {
  "/": { file: "index.html", type: "text/html; charset=utf-8" },
  "/app.js": { file: "app.js", type: "text/javascript; charset=utf-8" },
  "/style.css": { file: "style.css", type: "text/css; charset=utf-8" },
};

/** Starts the inspector on 127.0.0.1. */
export async function startInspector(options: InspectorOptions): Promise<Inspector> {
  const now = options.now ?? (() => new Date());
  const server = http.createServer((req, res) => {
    handle(req, res, options, now).catch((error: unknown) => send(res, 500, { error: { message: String(error) } }));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", (error: NodeJS.ErrnoException) => {
      const why = error.code === "EADDRINUSE" ? "is in use" : `cannot be opened (${error.code ?? String(error)})`;
      reject(workflowError("cli", "INVALID_OPTIONS", `port ${options.port} on 127.0.0.1 ${why}.`, { field: "port", value: options.port, hint: "pass another --port, or --port 0 for any free one" }));
    });
    server.listen(options.port, "127.0.0.1", () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function handle(req: http.IncomingMessage, res: http.ServerResponse, o: InspectorOptions, now: () => Date): Promise<void> {
  const port = (req.socket.address() as AddressInfo).port;
  if (req.headers.host !== `127.0.0.1:${port}` && req.headers.host !== `localhost:${port}`) return send(res, 403, { error: { message: "wrong Host" } });
  if (req.method !== "GET") return send(res, 405, { error: { message: "read-only" } });
  const url = new URL(req.url ?? "/", `http://127.0.0.1:${port}`);
  const asset = ASSETS[url.pathname];
  if (asset !== undefined) {
    const body = await readFile(new URL(`../../ui/${asset.file}`, import.meta.url));
    res.writeHead(200, { "content-type": asset.type, "cache-control": "no-store", "x-content-type-options": "nosniff" });
    return void res.end(body);
  }
  if (url.pathname === "/api/runs") return send(res, 200, { schema: JSON_SCHEMAS.list, runs: await listRuns(o.roots, now().getTime()) });
  const m = /^\/api\/runs\/([^/]+)$/.exec(url.pathname);
  if (m !== null) {
    // Only a bare run id: a path-like id would let the page read folders outside the plan root.
    const id = safeDecode(m[1] as string);
    if (id === null || !validateSlug(id).ok) return send(res, 400, { error: { code: "INVALID_SLUG", message: `not a run id: ${JSON.stringify(m[1])}` } });
    try {
      return send(res, 200, await runPage(o, id, now));
    } catch (error) {
      const e = error as { code?: string; message?: string };
      return send(res, e.code === "NOT_FOUND" ? 404 : 400, { error: { code: e.code ?? "ERROR", message: e.message ?? String(error) } });
    }
  }
  send(res, 404, { error: { message: `no such page ${url.pathname}` } });
}

/** What the run view of the page shows: the run, its steps with reuse verdicts, its diagram and its journal. */
async function runPage(o: InspectorOptions, id: string, now: () => Date): Promise<object> {
  const detail = await runDetail(o.roots, id, now().getTime());
  const records = await readStepRecords(detail.summary.runDir);
  const steps = await Promise.all(
    detail.steps.map(async (s) => ({ ...s, verdict: await stepVerdict(detail.summary.runDir, records.find((r) => r.stepId === s.stepId) ?? null, null) })),
  );
  let diagram: object | null = null;
  const raw = detail.metadata?.state;
  if (raw !== undefined && o.defDirs.length > 0) {
    const state = migrateState(raw);
    if (state.ok) {
      const d = buildDiagram(loadDefinitionFolders(o.defDirs).registry, state.state.workflowKey, state.state);
      if (d !== null) diagram = { ...d, mermaid: toMermaid(d) };
    }
  }
  const journal = await runJournal(await locateRun(o.roots, detail.summary.runDir), o.roots);
  return { schema: "phasekit.inspector-run/1", summary: detail.summary, metadata: detail.metadata, pending: detail.pending, steps, diagram, journal };
}

function safeDecode(text: string): string | null {
  try {
    return decodeURIComponent(text);
  } catch {
    return null;
  }
}

function send(res: http.ServerResponse, status: number, body: object): void {
  res.writeHead(status, { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" });
  res.end(JSON.stringify(body));
}
