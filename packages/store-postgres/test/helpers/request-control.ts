/**
 * Another "machine" that asks a run to pause or stop: its own process and connection, no lease, filing the request
 * through the PostgreSQL store with the same `requestPause` / `requestStop` an fs user calls.
 *   argv: url namespace slug signal reason    prints one JSON line: {ok, request} or {ok: false, code, message}
 */
import { requestPause, requestStop } from "@phasekit/adapters-pi";
import { openPostgresPlanStore } from "../../src/index.js";

const [url, namespace, slug, signal, reason] = process.argv.slice(2) as [string, string, string, "pause" | "stop", string];
const store = await openPostgresPlanStore({ connectionString: url, namespace });
try {
  const request = await (signal === "pause" ? requestPause : requestStop)({ store, target: slug, reason });
  process.stdout.write(`${JSON.stringify({ ok: true, pid: process.pid, request })}\n`);
} catch (error) {
  const e = error as { code?: string; message?: string };
  process.stdout.write(`${JSON.stringify({ ok: false, pid: process.pid, code: e.code ?? "UNKNOWN", message: e.message })}\n`);
} finally {
  await store.close();
}
