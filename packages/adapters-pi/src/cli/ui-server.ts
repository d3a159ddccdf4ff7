/**
 * The inspector: a small HTTP server on 127.0.0.1 serving the static page shipped in the package (`ui/`, no
 * build step, nothing fetched from elsewhere) and a JSON API over the same run views and actions as the CLI.
 * Three walls: the Host must be this loopback address (no DNS rebinding); every request carries the per-launch
 * secret token (Jupyter's model: other local users can reach the port, not the token); a write (POST) carries it
 * in a header and a JSON body, which no other origin can send without a preflight this server never grants.
 */
import { randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { workflowError, type WorkflowError } from "@phasekit/core";
import { validateSlug } from "../io/plan-paths.js";
import { CONTROL_ACTIONS, type ControlAction } from "./control-actions.js";
import { approveFromPage } from "./inspector-approve.js";
import { act, payloadPage, PAYLOAD_PAGE, runPage, type ApiContext } from "./inspector-api.js";
import { stepCursors } from "./inspector-steps.js";
import { cookieOf, MAX_BODY, optionalInt, readBody, safeDecode, same, send } from "./inspector-http.js";
import { failureAnswer } from "./inspector-failure.js";
import { JSON_SCHEMAS } from "./io.js";
import { listRuns, locateRun, runDetail, type Roots } from "./run-view.js";
import { streamChanges } from "./run-watch.js";
import { storeAt } from "./store-runs.js";
import { timelinePage, travel, TRAVEL_ACTIONS, type TravelAction } from "./inspector-travel.js";

/** Options of `startInspector`. */
export interface InspectorOptions {
  roots: Roots;
  defDirs: readonly string[];
  /** 0 picks a free port. */
  port: number;
  now?: () => Date;
  /** The secret every request must carry (default: 32 random bytes, new at each launch). */
  token?: string;
}

/** A running inspector. */
export interface Inspector {
  /** The page's address, token included: the one link that opens it. */
  url: string;
  /** The address without the token. */
  origin: string;
  token: string;
  close(): Promise<void>;
}

const ASSETS: Record<string, { file: string; type: string }> = {
  "/": { file: "index.html", type: "text/html; charset=utf-8" },
  "/app.js": { file: "app.js", type: "text/javascript; charset=utf-8" },
  "/early.js": { file: "early.js", type: "text/javascript; charset=utf-8" },
  "/style.css": { file: "style.css", type: "text/css; charset=utf-8" },
  "/time-travel.js": { file: "time-travel.js", type: "text/javascript; charset=utf-8" },
  "/approval.js": { file: "approval.js", type: "text/javascript; charset=utf-8" },
  "/schema-form.js": { file: "schema-form.js", type: "text/javascript; charset=utf-8" },
};

const TOKEN_HEADER = "x-phasekit-token";

/** Starts the inspector on 127.0.0.1. */
export async function startInspector(options: InspectorOptions): Promise<Inspector> {
  const token = options.token ?? randomBytes(32).toString("base64url");
  const ctx: ApiContext = { roots: options.roots, defDirs: options.defDirs, now: options.now ?? (() => new Date()) };
  const streams = new Set<() => void>();
  const server = http.createServer((req, res) => {
    // A store that cannot be reached, like every typed error, is answered as the CLI reads it (never a raw 500).
    handle(req, res, ctx, token, streams).catch((error: unknown) => {
      const f = failureAnswer(error);
      send(res, f.status, f.body);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", (error: NodeJS.ErrnoException) => {
      const why = error.code === "EADDRINUSE" ? "is in use" : `cannot be opened (${error.code ?? String(error)})`;
      reject(workflowError("cli", "INVALID_OPTIONS", `port ${options.port} on 127.0.0.1 ${why}.`, { field: "port", value: options.port, hint: "pass another --port, or --port 0 for any free one" }));
    });
    server.listen(options.port, "127.0.0.1", () => resolve());
  });
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  return {
    url: `${origin}?token=${token}`,
    origin,
    token,
    close: () =>
      new Promise<void>((resolve) => {
        // Event streams never end by themselves: end them, or the server waits for them forever.
        for (const stop of streams) stop();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function handle(req: http.IncomingMessage, res: http.ServerResponse, o: ApiContext, token: string, streams: Set<() => void>): Promise<void> {
  const port = (req.socket.address() as AddressInfo).port;
  if (req.headers.host !== `127.0.0.1:${port}` && req.headers.host !== `localhost:${port}`) return send(res, 403, { error: { code: "FORBIDDEN", message: "wrong Host" } });
  const url = new URL(req.url ?? "/", `http://127.0.0.1:${port}`);
  const cookie = `phasekit-token-${port}`;
  const given = req.headers[TOKEN_HEADER] ?? cookieOf(req, cookie) ?? (req.method === "GET" ? url.searchParams.get("token") : null);
  if (typeof given !== "string" || !same(given, token)) {
    return send(res, 403, { error: { code: "FORBIDDEN", message: "this inspector needs its token: open the URL `phasekit ui` printed (…/?token=…)" } });
  }
  if (req.method === "POST") return post(req, res, o, url, token);
  if (req.method !== "GET") return send(res, 405, { error: { code: "FORBIDDEN", message: "GET or POST only" } });
  const asset = ASSETS[url.pathname];
  if (asset !== undefined) {
    const body = await readFile(new URL(`../../ui/${asset.file}`, import.meta.url));
    // The page's own requests (its script, its style, the API) carry the token as a cookie of this port only.
    res.writeHead(200, {
      "content-type": asset.type,
      "cache-control": "no-store",
      "x-content-type-options": "nosniff",
      "referrer-policy": "no-referrer",
      "set-cookie": `${cookie}=${token}; HttpOnly; SameSite=Strict; Path=/`,
    });
    return void res.end(body);
  }
  if (url.pathname === "/api/runs") return send(res, 200, { schema: JSON_SCHEMAS.list, runs: await listRuns(o.roots, o.now().getTime()) });
  const run = /^\/api\/runs\/([^/]+)$/.exec(url.pathname);
  if (run !== null) {
    const offset = optionalInt(url, "stepOffset");
    const limit = optionalInt(url, "stepLimit");
    // A live page's refresh names the journal entries it holds (the last one, the last state): only newer ones come.
    const after = optionalInt(url, "journalAfter");
    const state = optionalInt(url, "journalState");
    if (offset === null || limit === null || after === null || state === null) throw badQuery(url, ["stepOffset", "stepLimit", "journalAfter", "journalState"]);
    const since = after === undefined ? undefined : { after, state: state ?? 0 };
    return answer(res, run[1] as string, (id) => runPage(o, id, { ...(offset === undefined ? {} : { offset }), ...(limit === undefined ? {} : { limit }), ...stepCursors(url) }, since));
  }
  const events = /^\/api\/runs\/([^/]+)\/events$/.exec(url.pathname);
  if (events !== null) {
    const id = safeDecode(events[1] as string);
    if (id === null || !validateSlug(id).ok) return send(res, 400, { error: { code: "INVALID_SLUG", message: `not a run id: ${JSON.stringify(events[1])}` } });
    // Answered as every error is (failureAnswer): NOT_FOUND is a 404, an ambiguous or unreadable target says so.
    const location = await locateRun(o.roots, id);
    // A store named by URL has no folder to stat: what a reader shows of the run is its signature there (the
    // store's own, one small read, when it has one). The lease's renewals (its `until`) are not a change, its
    // holder coming, going or going stale is.
    const byUrl = o.roots.store === undefined ? undefined : await storeAt(o.roots.store, o.roots.repoRoot);
    const own = byUrl?.runSignature?.bind(byUrl);
    // Read from the store, not stamped by a clock tick: a look there is always settled.
    const signature =
      byUrl === undefined
        ? undefined
        : own !== undefined
          ? async () => ({ signature: await own(location.slug), settled: true })
          : async () => {
              const d = await runDetail(o.roots, location.slug, 0);
              const signature = JSON.stringify({ ...d, summary: { ...d.summary, ageMs: null, lockHolder: d.summary.lockHolder === null ? null : d.summary.lockHolder.replace(/, lease until .*$/, "") } });
              return { signature, settled: true };
            };
    const stop = await streamChanges(req, res, location.runDir, signature);
    streams.add(stop);
    req.on("close", () => streams.delete(stop));
    return;
  }
  const timeline = /^\/api\/runs\/([^/]+)\/timeline$/.exec(url.pathname);
  if (timeline !== null) {
    const offset = optionalInt(url, "offset");
    const limit = optionalInt(url, "limit");
    const step = url.searchParams.get("step");
    if (offset === null || limit === null) throw badQuery(url, ["offset", "limit"]);
    return answer(res, timeline[1] as string, (id) => timelinePage(o, id, { ...(step === null ? {} : { step }), ...(offset === undefined ? {} : { offset }), ...(limit === undefined ? {} : { limit }) }));
  }
  const output = /^\/api\/runs\/([^/]+)\/steps\/([^/]+)\/output$/.exec(url.pathname);
  if (output !== null) {
    const stepId = safeDecode(output[2] as string);
    const offset = Number(url.searchParams.get("offset") ?? 0);
    const limit = Number(url.searchParams.get("limit") ?? PAYLOAD_PAGE);
    if (stepId === null || !Number.isSafeInteger(offset) || offset < 0 || !Number.isSafeInteger(limit) || limit < 1) return send(res, 400, { error: { code: "INVALID_OPTIONS", message: "step id, offset or limit is malformed" } });
    return answer(res, output[1] as string, async (id) => (await payloadPage(o, id, stepId, offset, limit)) ?? notFound(`run ${id} has no step ${JSON.stringify(stepId)}`));
  }
  send(res, 404, { error: { code: "NOT_FOUND", message: `no such page ${url.pathname}` } });
}

async function post(req: http.IncomingMessage, res: http.ServerResponse, o: ApiContext, url: URL, token: string): Promise<void> {
  const header = req.headers[TOKEN_HEADER];
  if (typeof header !== "string" || !same(header, token)) return send(res, 403, { error: { code: "FORBIDDEN", message: `a write needs the token in the ${TOKEN_HEADER} header` } });
  if (!String(req.headers["content-type"] ?? "").startsWith("application/json")) return send(res, 415, { error: { code: "INVALID_OPTIONS", message: "a write sends JSON" } });
  const m = /^\/api\/runs\/([^/]+)\/actions\/([a-z]+)$/.exec(url.pathname);
  if (m !== null && (TRAVEL_ACTIONS as readonly string[]).includes(m[2] as string)) {
    const body = await readBody(req);
    if (body === null) return send(res, 400, { error: { code: "INVALID_OPTIONS", message: `the body must be a JSON object under ${MAX_BODY} bytes, e.g. {"at":"build"}` } });
    return answer(res, m[1] as string, (id) => travel(o, id, m[2] as TravelAction, body));
  }
  if (m !== null && m[2] === "approve") {
    const body = await readBody(req);
    if (body === null) return send(res, 400, { error: { code: "INVALID_OPTIONS", message: `the body must be a JSON object under ${MAX_BODY} bytes, e.g. {"data":{"channel":"beta"}}` } });
    return answer(res, m[1] as string, (id) => approveFromPage(o.roots, id, body));
  }
  if (m === null || !(CONTROL_ACTIONS as readonly string[]).includes(m[2] as string)) return send(res, 404, { error: { code: "NOT_FOUND", message: `no such action ${url.pathname}` } });
  const body = await readBody(req);
  if (body === null) return send(res, 400, { error: { code: "INVALID_OPTIONS", message: `the body must be a JSON object under ${MAX_BODY} bytes, e.g. {"reason":"…"}` } });
  const reason = typeof body["reason"] === "string" && body["reason"].trim() !== "" ? body["reason"].trim() : undefined;
  return answer(res, m[1] as string, (id) => act(o, id, m[2] as ControlAction, reason));
}

/** INVALID_OPTIONS naming the first of `fields` that is no whole number ≥ 0, and its value. */
function badQuery(url: URL, fields: readonly string[]): WorkflowError {
  const field = fields.find((f) => optionalInt(url, f) === null) ?? fields[0];
  return workflowError("cli", "INVALID_OPTIONS", `the query parameter ${field} must be a whole number ≥ 0, not ${JSON.stringify(url.searchParams.get(field ?? ""))}.`, {
    field,
    value: url.searchParams.get(field ?? ""),
    hint: `${fields.join(", ")} are whole numbers ≥ 0; leave one out for its default`,
  });
}

/** Runs `fn` for a bare run id (a path-like id would reach folders outside the plan root) and sends its answer. */
async function answer(res: http.ServerResponse, rawId: string, fn: (id: string) => Promise<object>): Promise<void> {
  const id = safeDecode(rawId);
  if (id === null || !validateSlug(id).ok) return send(res, 400, { error: { code: "INVALID_SLUG", message: `not a run id: ${JSON.stringify(rawId)}` } });
  try {
    return send(res, 200, await fn(id));
  } catch (error) {
    const f = failureAnswer(error);
    return send(res, f.status, f.body);
  }
}

function notFound(message: string): never {
  throw workflowError("cli", "NOT_FOUND", message);
}

