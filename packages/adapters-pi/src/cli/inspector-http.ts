/**
 * The inspector's HTTP plumbing: query numbers, JSON bodies of a bounded size, the token's cookie and its
 * constant-time comparison, percent-decoding that never throws, and JSON answers (ui-server.ts routes).
 */
import { timingSafeEqual } from "node:crypto";
import type http from "node:http";

/** The largest body a write may send. */
export const MAX_BODY = 16 * 1024;

/** A query parameter as a whole number ≥ 0: undefined when absent, null when malformed. */
export function optionalInt(url: URL, name: string): number | undefined | null {
  const text = url.searchParams.get(name);
  if (text === null) return undefined;
  const n = Number(text);
  return /^\d+$/.test(text) && Number.isSafeInteger(n) ? n : null;
}

/** A request's JSON object body (at most MAX_BODY bytes), or null when it is anything else. */
export function readBody(req: http.IncomingMessage): Promise<Record<string, unknown> | null> {
  return new Promise((resolve) => {
    let size = 0;
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size <= MAX_BODY) chunks.push(c);
    });
    req.on("end", () => {
      if (size > MAX_BODY) return resolve(null);
      try {
        const v: unknown = JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}");
        resolve(typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null);
      } catch {
        resolve(null);
      }
    });
    req.on("error", () => resolve(null));
  });
}

/** The value of cookie `name` of a request. */
export function cookieOf(req: http.IncomingMessage, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? "").split(";")) {
    const [k, ...v] = part.trim().split("=");
    if (k === name) return v.join("=");
  }
  return undefined;
}

/** Whether two secrets are equal, compared in constant time. */
export function same(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** `decodeURIComponent`, or null for text that is not percent-encoding. */
export function safeDecode(text: string): string | null {
  try {
    return decodeURIComponent(text);
  } catch {
    return null;
  }
}

/** Answers `body` as JSON with `status`, never cached. */
export function send(res: http.ServerResponse, status: number, body: object): void {
  res.writeHead(status, { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" });
  res.end(JSON.stringify(body));
}
