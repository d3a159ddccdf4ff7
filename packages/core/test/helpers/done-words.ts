/**
 * The word rule for texts a model reads: "done", "complete" and "finished" (and their forms) may speak of the run
 * only once the run has completed; before that they may appear only bound to the current phase, in these phrases.
 */

/** Phrases that tie a done-word to the current phase (pi-workflows' defaults and phasekit's last-phase note). */
export const PHASE_BOUND = [
  "when this phase is finished",
  "when you finish this phase",
  "when finished, call workflow_step to advance to the next phase",
  "complete the current phase",
  "call workflow_step when done",
] as const;

const DONE_WORD = /\b(done|complete[sd]?|completion|finish(?:ed|es)?)\b/i;

/** The first done-word of `text` outside the phase-bound phrases, or undefined. */
export function doneWord(text: string): string | undefined {
  let rest = text.toLowerCase();
  for (const phrase of PHASE_BOUND) rest = rest.split(phrase).join(" ");
  return DONE_WORD.exec(rest)?.[0];
}
