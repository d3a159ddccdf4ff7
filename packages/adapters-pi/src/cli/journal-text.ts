/**
 * A run's journal in words a person reads: each entry as a sentence ("looped back to 🧪 Test (loop 2 of 3)",
 * "running → paused, phase plan → test"), for `phasekit journal` and the inspector (which keeps the raw entry one
 * click away). State entries are told by what changed since the one before, so the reader sees moves, not
 * documents.
 */
import type { JournalEntry } from "../store/journal.js";
import { METADATA_DELTA_EVENT, METADATA_EVENT } from "../store/journal.js";
import { clip } from "./format.js";

type Doc = Record<string, unknown>;

/**
 * What sentences carry from one page of a journal to the next (a follower reads only what is new): the last
 * state seen, which the next state entry is told against.
 */
export interface SentenceCarry {
  previous?: Doc | undefined;
}

/**
 * One sentence per entry, in order (state entries compared with the state entry before them). A follower passes
 * the same `carry` with each page, so a page's first state is told against the last one of the page before.
 */
export function journalSentences(entries: readonly JournalEntry[], carry: SentenceCarry = {}): string[] {
  return entries.map((e) => {
    const doc = stateOf(e, carry.previous);
    if (doc === undefined) return eventSentence(e);
    const text = stateSentence(doc, carry.previous);
    carry.previous = doc;
    return text;
  });
}

/** `#3  <time>  gen 2  advanced 📋 Plan → 🧪 Test, entering check`. */
export function journalLine(e: JournalEntry, sentence: string): string {
  return `#${e.seq}  ${e.at}  gen ${e.generation}  ${sentence}`;
}

function stateOf(e: JournalEntry, previous: Doc | undefined): Doc | undefined {
  if (e.event === METADATA_EVENT && isDoc(e.data)) return e.data;
  if (e.event !== METADATA_DELTA_EVENT) return undefined;
  // An earlier version's delta line: its top-level sets (`[[key], value]`) applied to the state before it.
  const ops = (e.data as { ops?: unknown } | null)?.ops;
  if (!Array.isArray(ops)) return undefined;
  const doc: Doc = { ...(previous ?? {}) };
  for (const op of ops) if (Array.isArray(op) && op.length === 2 && Array.isArray(op[0]) && op[0].length === 1) doc[String(op[0][0])] = op[1];
  return doc;
}

function stateSentence(d: Doc, p: Doc | undefined): string {
  const phase = d["phase"] === undefined || d["phase"] === null ? "" : `, phase ${String(d["phase"])}`;
  if (p === undefined) return `created by ${String(d["currentTool"] ?? d["ownerTool"] ?? "?")}: ${String(d["status"])}${phase}`;
  const changes: string[] = [];
  if (d["status"] !== p["status"]) changes.push(`${String(p["status"])} → ${String(d["status"])}${d["failureReason"] ? ` (${String(d["failureReason"])})` : ""}`);
  if (d["phase"] !== p["phase"]) changes.push(`phase ${String(p["phase"] ?? "-")} → ${String(d["phase"] ?? "-")}`);
  if (d["lastCompletedStepId"] !== p["lastCompletedStepId"] && d["lastCompletedStepId"] !== undefined) changes.push(`step ${String(d["lastCompletedStepId"])} done`);
  if (d["currentTool"] !== p["currentTool"] && d["currentTool"] !== undefined) changes.push(`now driven by ${String(d["currentTool"])}`);
  return changes.length > 0 ? changes.join(", ") : `state saved (${String(d["status"])}${phase})`;
}

interface Ref {
  phaseName?: unknown;
  emoji?: unknown;
}

/** A journaled phase reference as core labels phases (`🔍 Review`, the bare name without an emoji). */
function label(ref: unknown): string {
  const r = (isDoc(ref) ? ref : {}) as Ref;
  const name = typeof r.phaseName === "string" ? r.phaseName : "?";
  return typeof r.emoji === "string" && r.emoji !== "" ? `${r.emoji} ${name}` : name;
}

function eventSentence(e: JournalEntry): string {
  const d = isDoc(e.data) ? e.data : {};
  const list = (v: unknown) => (Array.isArray(v) ? v.map(String) : []);
  const entering = list(d["entered"]).length > 0 ? `, entering ${list(d["entered"]).join(" > ")}` : "";
  switch (e.event) {
    case "workflow:started":
      return `workflow ${String(d["workflowKey"])} started at ${label(d["to"])}${entering}`;
    case "workflow:advanced":
      return `advanced ${label(d["from"])} → ${label(d["to"])}${entering}`;
    case "workflow:entered-subworkflow":
      return `entered sub-workflow ${list(d["entered"]).join(" > ")} at ${label(d["to"])}`;
    case "workflow:exited-subworkflow":
      return `left ${list(d["exited"]).join(", ")}: ${label(d["from"])} → ${label(d["to"])}${entering}`;
    case "workflow:completed":
      return `workflow completed after ${label(d["from"])}`;
    case "workflow:looped":
      return `looped back to ${label(d["to"])} (loop ${String(d["loops"])}${typeof d["maxLoops"] === "number" ? ` of ${d["maxLoops"]}` : ""}) in ${String(d["workflowKey"])}`;
    case "workflow:restarted-scope":
      return `restarted ${String(d["workflowKey"])} at ${label(d["to"])}`;
    case "workflow:cancelled":
      return `workflow cancelled${d["via"] === "confirm" ? " (confirmed)" : ""}`;
    case "workflow:paused":
      return "workflow paused";
    case "workflow:resumed":
      return "workflow resumed";
    case "workflow:failed":
      return `workflow failed: ${String(d["reason"])}`;
    case "workflow:notified":
      return `end announced (${String(d["status"])})`;
    case "step-failed":
      return `step ${String(d["step"])} failed (attempt ${String(d["attempt"])}): ${clip(String(d["error"]), 240)}`;
    case "rerun":
      return `rerun from ${String(d["from"])} asked: ${String(d["steps"])} step(s) run again at the next resume${typeof d["reason"] === "string" ? ` (${d["reason"]})` : ""}`;
    case "waiting":
      return `waits for ${d["for"] === "approval" ? "approval" : String(d["for"])} ${String(d["name"])}${typeof d["prompt"] === "string" ? `: ${d["prompt"]}` : ""}`;
    case "approval-refused":
      return `approval ${String(d["name"])} refused, still waiting: ${clip(String(d["reason"]), 240)}`;
    case "approval":
      return `approval ${String(d["name"])}: ${String(d["status"])}`;
    case "forked":
      return `forked from run ${String(d["from"])} at ${String(d["at"])} (${String(d["steps"])} step(s) reused)`;
    case "paused":
    case "stopped":
      return `${e.event}${typeof d["reason"] === "string" ? `: ${d["reason"]}` : ""}`;
    default:
      return `${e.event}${e.data === undefined ? "" : `  ${clip(JSON.stringify(e.data), 160)}`}`;
  }
}

function isDoc(v: unknown): v is Doc {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
