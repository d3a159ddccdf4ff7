/**
 * The engine's `CheckpointStore`: every backend's checkpoints are this, over its history port (history-port.ts).
 * The step flow (step-flow.ts), commit intents and rerun marks are decided here once; the fs run log,
 * PostgreSQL and the memory store only read and write their records.
 */
import { workflowError } from "@phasekit/core";
import { checkStepKey, commitIntentRecord, type CheckpointStore, type CommitIntent, type KnownInput, type StepOutcome } from "./checkpoint-port.js";
import { checkCommitRecord } from "./commit-record.js";
import type { HistoryPort } from "./history-port.js";
import type { CommitRecord } from "./records.js";
import { pickStepHint, reservedKeyRefusal } from "./reserved-keys.js";
import { keysFrom, type PriorStep } from "./reuse-decision.js";
import { keysToSpend } from "./rerun-spent.js";
import { runStep } from "./step-flow.js";

const SCOPE = "checkpoints";

/** The checkpoint store over `history`. */
export function checkpointsOver<R extends PriorStep, S>(history: HistoryPort<R, S>): CheckpointStore {
  const { file } = history;
  const stamp = (): string => history.now().toISOString();

  async function putCommit(candidate: CommitRecord): Promise<CommitRecord> {
    // The one schema and check: nothing a backend would refuse reaches it.
    return history.putCommit(checkCommitRecord(candidate, file));
  }

  async function step<T>(id: string, input: unknown, fn: (attempt: number) => T | Promise<T>, known?: KnownInput): Promise<StepOutcome<T>> {
    const key = checkStepKey(id);
    const r = await runStep(history, key, input, fn, known);
    // The record's view is built when first asked for (`ctx.step` never reads it, and a miss should not pay for
    // it), then kept: every read gives the same object.
    const prior = r.record;
    let view: StepOutcome<T>["record"] | undefined;
    const record = (): StepOutcome<T>["record"] => (view ??= history.view(prior));
    if (r.reused) return { reused: true, output: r.output, get record() { return record(); } };
    const { reason, movedAside } = r;
    return { reused: false, reason, output: r.output, ...(movedAside === undefined ? {} : { movedAside }), get record() { return record(); } };
  }

  const store: CheckpointStore = {
    file,
    step,
    async record(id) {
      const r = await history.latest(id);
      return r === undefined ? undefined : history.view(r);
    },
    records: () => history.records(),
    async recordCommitIntent(intent: CommitIntent) {
      const record = commitIntentRecord(intent, stamp());
      history.mayWrite(`recording the commit intent "${record.id}"`);
      return putCommit(record);
    },
    async markCommitted(id, options = {}) {
      history.mayWrite(`marking the commit "${id}" as made`);
      const intent = (await history.commits()).get(id);
      if (intent === undefined) {
        throw workflowError(SCOPE, "NOT_FOUND", `no commit intent "${id}" in ${file}.`, { file, field: "id", value: id, hint: "call recordCommitIntent before the commit" });
      }
      const { sha } = options;
      return putCommit({ ...intent, status: "committed", committedAt: stamp(), ...(sha === undefined ? {} : { sha }) });
    },
    commits: async () => [...(await history.commits()).values()],
    async compact() {
      history.mayWrite("a compaction");
      return history.compact();
    },
  };
  const spend = history.spend?.bind(history);
  if (spend !== undefined) {
    store.spendRerunMarks = async () => {
      // Most runs never had a rerun: their end reads no records (12–18 ms for 10,000 steps on the fs log).
      if (history.hasMarks?.() === false) return { keys: [] };
      const keys = keysToSpend(await history.records());
      if (keys.length === 0) return { keys };
      history.mayWrite("spending the rerun marks of the steps the run did not reach");
      await spend({ keys, at: stamp() });
      return { keys };
    };
  }
  const mark = history.mark?.bind(history);
  if (mark === undefined) return store;
  return {
    ...store,
    async supersede(from, note) {
      history.mayWrite(`a rerun from "${from}"`);
      const ordered = (await history.records()).map((r) => r.stepId);
      // phasekit's own entries are hidden from people (`phasekit show`) and are not steps anyone can mean.
      const reserved = reservedKeyRefusal(from, { scope: SCOPE, action: "rerun", field: "from", run: history.run, file, keys: ordered });
      if (reserved !== undefined) throw reserved;
      const keys = keysFrom(ordered, from);
      if (keys === null) {
        throw workflowError(SCOPE, "NOT_FOUND", `the history in ${file} holds no step "${from}".`, { file, field: "from", value: from, hint: pickStepHint(history.run, ordered) });
      }
      await mark({ from, keys, at: stamp(), ...(note.reason === undefined ? {} : { reason: note.reason }) });
      return { keys };
    },
  };
}
