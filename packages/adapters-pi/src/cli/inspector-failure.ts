/**
 * The inspector's answer to an error: what a command would print (the typed code, the message without its
 * tags, the hint) and an HTTP status from the same reading (`toFailure`): 404 for NOT_FOUND, 409 for a run held
 * by another process, 503 when the store could not be reached (a database down or unreachable: the request may
 * succeed later unchanged), 500 for an error nobody typed, 400 for the rest.
 */
import { isWorkflowError } from "@phasekit/core";
import { EXIT, plainMessage, toFailure } from "./io.js";

/** The status and JSON body the inspector answers `error` with. */
export function failureAnswer(error: unknown): { status: number; body: { error: { code: string; message: string; hint?: string } } } {
  const f = toFailure(error);
  const details = isWorkflowError(error) ? error.details : undefined;
  const hint = typeof details?.["hint"] === "string" ? details["hint"] : undefined;
  const status =
    f.exitCode === EXIT.notFound ? 404 : f.exitCode === EXIT.busy ? 409 : details?.["connectionLost"] === true ? 503 : f.error.code === "INTERNAL" ? 500 : 400;
  return { status, body: { error: { code: f.error.code, message: plainMessage(f.error.message), ...(hint === undefined ? {} : { hint }) } } };
}
