/**
 * The one flow of a durable step, for every backend: decide from the latest record (reuse-decision.ts), verify
 * and reuse a stored output, or record the start, confirm the lease, run the body, and record its failure or
 * its output. A backend implements only the step port (step-port.ts); nothing here is restated in a store.
 */
import { encodeCanonicalCopy } from "../io/canonical-copy.js";
import type { JsonValue } from "../io/plain-json.js";
import { fingerprint, fingerprintOfCanonical } from "./fingerprint.js";
import { decideStep, type PriorStep, type RerunReason } from "./reuse-decision.js";
import { stepErrorText } from "./step-error.js";
import type { StepPort } from "./step-port.js";
import type { KnownInput } from "./checkpoint-port.js";

/** What a step gave: the stored output, or the fresh one and why it had to run. */
export type StepResult<T, R> =
  | { reused: true; output: T; record: R }
  | { reused: false; reason: RerunReason; output: T; record: R; /** Where a damaged stored output was kept. */ movedAside?: string };

/**
 * Runs step `key` through `port`: reuses its stored output when the decision says so and the output verifies,
 * else runs `fn(attempt)`. `known.inputFingerprint`, when the caller computed it already, is not computed again;
 * `known.admit` may refuse a new attempt before it is recorded.
 */
export async function runStep<T, R extends PriorStep, S>(
  port: StepPort<R, S>,
  key: string,
  input: unknown,
  fn: (attempt: number) => T | Promise<T>,
  known?: Partial<KnownInput>,
): Promise<StepResult<T, R>> {
  port.mayWrite(`ctx.step("${key}")`);
  const inFp = known?.inputFingerprint ?? fingerprint(input);
  // A value the port or the body gives at once is not awaited: each await is a turn of the microtask queue, and
  // a miss's CPU, right after a blocking flush or a reply, is where a step loses most against its floor.
  const latest = port.latest(key);
  const previous = isThenable(latest) ? await latest : latest;
  const decision = decideStep(previous, inFp);
  let reason: RerunReason;
  let movedAside: string | undefined;
  if (!decision.verify) {
    known?.admit?.(decision.attempt);
    reason = decision.reason;
  } else {
    // Only a completed record of this very input is verified: `previous` is that record.
    const stored = await port.stored(previous as R, decision.outputFingerprint);
    if (stored.ok) return { reused: true, output: stored.output as T, record: previous as R };
    reason = stored.reason;
    movedAside = stored.movedAside;
  }
  const start = await port.start({ key, attempt: decision.attempt, inputFingerprint: inFp });
  const guard = port.beforeBody(start);
  if (guard !== undefined) await guard;
  let output: T;
  let text: string;
  let value: JsonValue;
  try {
    // A step that returns nothing stores null (undefined is no JSON value), and gives null as a replay would.
    const made = fn(decision.attempt);
    output = ((isThenable(made) ? await made : made) ?? null) as T;
    // Inside the try: an output that is no plain JSON fails the step (recorded, counted) like a throw would.
    ({ text, copy: value } = encodeCanonicalCopy(output));
  } catch (error) {
    await port.fail(start, stepErrorText(error)).catch(() => undefined);
    throw error;
  }
  // A rerun because the stored output failed its check replaces that copy whole.
  const repair = reason === "artifact-corrupt" || reason === "artifact-missing";
  const record = await port.complete(start, { text, value, fingerprint: fingerprintOfCanonical(text), repair });
  return { reused: false, reason, output, record, ...(movedAside === undefined ? {} : { movedAside }) };
}

function isThenable<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof (value as { then?: unknown } | null | undefined)?.then === "function";
}
