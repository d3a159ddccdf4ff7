/**
 * A scripted OpenAI-compatible model on 127.0.0.1: `/v1/chat/completions` streams the replies a test or the demo
 * queued (tool calls or text), and records every request so one can print what the agent saw. A reply can be
 * held (`hold: true`): the request then waits until `release()`, which lets a caller kill pi mid-request.
 */
import * as http from "node:http";
import type { AddressInfo } from "node:net";

/** One model reply. */
export type ScriptedReply =
  | { text: string; hold?: boolean }
  | { tool: string; args: Record<string, unknown>; hold?: boolean }
  /** An HTTP error instead of a stream (pi treats a 5xx as retryable). */
  | { status: number; hold?: boolean };

/** One request pi made, as the model received it. */
export interface SeenRequest {
  readonly messages: ReadonlyArray<{ role: string; content?: unknown; tool_calls?: unknown; name?: string }>;
  readonly tools: readonly string[];
}

/** The running server. */
export interface ScriptedModel {
  readonly baseUrl: string;
  readonly requests: SeenRequest[];
  /** Queue replies; when the queue is empty the model answers `fallback` (default: a short text). */
  push(...replies: ScriptedReply[]): void;
  fallback: ScriptedReply;
  /** Resolves when `n` requests have arrived. */
  waitForRequests(n: number, timeoutMs?: number): Promise<void>;
  /** Lets held requests go (they get their reply) — or drops them when pi is gone. */
  release(): void;
  close(): Promise<void>;
}

function sse(res: http.ServerResponse, reply: Exclude<ScriptedReply, { status: number }>, n: number): void {
  const base = { id: `chatcmpl-${n}`, object: "chat.completion.chunk", created: 0, model: "scripted" };
  const send = (choice: Record<string, unknown>, extra: Record<string, unknown> = {}): void => {
    res.write(`data: ${JSON.stringify({ ...base, choices: [{ index: 0, ...choice }], ...extra })}\n\n`);
  };
  if ("text" in reply) {
    send({ delta: { role: "assistant", content: reply.text }, finish_reason: null });
    send({ delta: {}, finish_reason: "stop" }, { usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } });
  } else {
    const call = { index: 0, id: `call_${n}`, type: "function", function: { name: reply.tool, arguments: JSON.stringify(reply.args) } };
    send({ delta: { role: "assistant", content: null, tool_calls: [call] }, finish_reason: null });
    send({ delta: {}, finish_reason: "tool_calls" }, { usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } });
  }
  res.end("data: [DONE]\n\n");
}

/** Starts the model on an ephemeral port of 127.0.0.1. */
export async function startScriptedModel(): Promise<ScriptedModel> {
  const queue: ScriptedReply[] = [];
  const requests: SeenRequest[] = [];
  const waiters: Array<{ n: number; resolve: () => void }> = [];
  const held: Array<() => void> = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      if (req.method !== "POST" || !req.url?.endsWith("/chat/completions")) {
        res.writeHead(404).end();
        return;
      }
      let body: { messages?: SeenRequest["messages"]; tools?: Array<{ function?: { name?: string } }> } = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as typeof body;
      } catch {
        // a malformed request still gets an answer; the recorded messages show it was empty
      }
      requests.push({ messages: body.messages ?? [], tools: (body.tools ?? []).map((t) => t.function?.name ?? "?") });
      const n = requests.length;
      for (const w of waiters.filter((x) => x.n <= n)) w.resolve();
      const reply = queue.shift() ?? model.fallback;
      if ("status" in reply) {
        res.writeHead(reply.status, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: `scripted ${reply.status} server error`, type: "server_error" } }));
        return;
      }
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      if (reply.hold) held.push(() => (res.destroyed ? undefined : sse(res, reply, n)));
      else sse(res, reply, n);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  const model: ScriptedModel = {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    fallback: { text: "Done for now." },
    push: (...r) => void queue.push(...r),
    waitForRequests(n, timeoutMs = 30_000) {
      if (requests.length >= n) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`scripted model: waited ${timeoutMs} ms for request ${n}, got ${requests.length}`)), timeoutMs);
        waiters.push({ n, resolve: () => (clearTimeout(t), resolve()) });
      });
    },
    release() {
      for (const go of held.splice(0)) go();
    },
    async close() {
      model.release();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return model;
}

/** The text of a chat message's content (string or parts). */
export function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((p: { text?: unknown }) => (typeof p?.text === "string" ? p.text : "")).join("");
  return "";
}
