/**
 * Reading a run log without claiming it: what the CLI, `readMetadata` and a resume analysis see. It folds
 * exactly what the head accepted, so a displaced holder's late bytes are invisible here too. Nothing is written.
 */
import path from "node:path";
import type { JsonValue } from "../../io/plain-json.js";
import { RUN_LOG_DIR } from "./format.js";
import { loadChain } from "./read-chain.js";
import type { StepEntry } from "./run-index.js";
import { eventsOf, stateOf } from "./state-keeper.js";
import { ValueFiles } from "./values.js";
import { readArtifact } from "./run-artifacts.js";

/** A read-only view of a run log. Call `close()` when done (it holds read descriptors). */
export interface RunLogView {
  /** The epoch of the head segment (the holder whose history this is). */
  readonly epoch: number;
  entries(): StepEntry[];
  entry(key: string): StepEntry | undefined;
  /** The step's output as JSON text, checked against its fingerprint; undefined when absent or damaged. */
  outputText(entry: StepEntry): Promise<string | undefined>;
  state(): JsonValue | undefined;
  events(name: string): JsonValue[];
  close(): void;
}

/** The run log of `runDir`, or null when the run has none (a run of the earlier format, or no step yet). */
export async function readRunLog(runDir: string): Promise<RunLogView | null> {
  const values = new ValueFiles();
  const chain = await loadChain(path.join(runDir, RUN_LOG_DIR), values).catch((error: unknown) => {
    values.close();
    throw error;
  });
  if (chain.headEpoch === 0) {
    values.close();
    return null;
  }
  const { index } = chain;
  return {
    epoch: chain.headEpoch,
    entries: () => [...index.steps.values()],
    entry: (key) => index.steps.get(key),
    async outputText(entry) {
      if (entry.artifact !== undefined && entry.outputFingerprint !== undefined) {
        const a = await readArtifact(runDir, entry.artifact, entry.outputFingerprint);
        return a.ok ? a.text : undefined;
      }
      if (entry.output === undefined) return undefined;
      const r = values.read(entry.output, entry.outputFingerprint);
      return r.ok ? r.text : undefined;
    },
    state: () => stateOf(index, values),
    events: (name) => eventsOf(index, values, name),
    close: () => values.close(),
  };
}
