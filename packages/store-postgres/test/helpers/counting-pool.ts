/**
 * A pool whose statements are counted (what a store sends is measured in statements, not timed): every call
 * of its `query` is kept in order, and a run's step-index load can be held back to see what a holder sends
 * while its index is still loading. The write count's raises are left out unless `raises: true`; then they can
 * be held back too (a raise in flight that has not reached the server).
 */
import pg from "pg";
import { RAISE_COUNT } from "../../src/store/write-count.js";

/** One statement as the store sent it: its text, its name when prepared, its values. */
export interface SentStatement {
  text: string;
  name: string | undefined;
  values: unknown[];
}

export interface CountingPool {
  pool: pg.Pool;
  /** Every statement sent, in the order `query` was called. */
  sent: SentStatement[];
  /** The texts of `sent`, in the same order. */
  texts: string[];
  /** Holds back every load of a run's step records (the one statement that reads them all at once) until `release()`. */
  holdIndexLoads(): void;
  release(): void;
  /** Holds back every raise (with `raises: true`) until `releaseRaises()`; `heldRaises` counts those waiting. */
  holdRaises(): void;
  releaseRaises(): void;
  readonly heldRaises: number;
}

/** The statements of a step-index load: the run's step records and its commits, read whole. */
export function isIndexLoad(text: string): boolean {
  return /FROM phasekit_(steps|commits) WHERE namespace = \$1 AND slug = \$2(?! AND)/.test(text);
}

const STEP_RECORDS_LOAD = /FROM phasekit_steps WHERE namespace = \$1 AND slug = \$2(?! AND)/;

export function countingPool(url: string, max = 4, options: { raises?: boolean } = {}): CountingPool {
  const pool = new pg.Pool({ connectionString: url, max });
  let raiseGate: Promise<void> | null = null;
  let openRaises = (): void => undefined;
  let heldRaises = 0;
  const sent: SentStatement[] = [];
  const texts: string[] = [];
  let gate: Promise<void> | null = null;
  let open = (): void => undefined;
  const original = pool.query.bind(pool) as (...args: unknown[]) => Promise<unknown>;
  // Not async: the store's query is sent in the same turn as before (a test of what goes out when counts turns).
  (pool as { query: unknown }).query = (...args: unknown[]) => {
    const first = args[0] as string | { name?: string; text: string; values?: unknown[] };
    const text = typeof first === "string" ? first : first.text;
    const values = (typeof first === "string" ? undefined : first.values) ?? (Array.isArray(args[1]) ? (args[1] as unknown[]) : []);
    // The write count's raises go out on their own time, up to 20 ms after the writes they count
    // (write-count.ts): kept out of what a test counts, or one landing inside a counted stretch would be its own.
    const raise = typeof first !== "string" && first.name === RAISE_COUNT.name;
    if (raise && options.raises !== true) return original(...args);
    sent.push({ text, name: typeof first === "string" ? undefined : first.name, values });
    texts.push(text);
    const held = gate;
    if (held !== null && STEP_RECORDS_LOAD.test(text)) return held.then(() => original(...args));
    const heldRaise = raiseGate;
    if (raise && heldRaise !== null) {
      heldRaises++;
      return heldRaise.then(() => (heldRaises--, original(...args)));
    }
    return original(...args);
  };
  return {
    pool,
    sent,
    texts,
    holdIndexLoads(): void {
      gate = new Promise((r) => (open = r));
    },
    release(): void {
      open();
      gate = null;
    },
    holdRaises(): void {
      raiseGate = new Promise((r) => (openRaises = r));
    },
    releaseRaises(): void {
      openRaises();
      raiseGate = null;
    },
    get heldRaises() {
      return heldRaises;
    },
  };
}
