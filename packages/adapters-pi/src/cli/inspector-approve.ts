/**
 * The inspector's approve action: a person's decision for a run that waits (`ctx.waitForApproval`, a phase's
 * approve gate), filed through the same control-request API as `phasekit approve` (the run checks the payload
 * against its wait's schema and takes the decision when it waits for it, across crashes).
 */
import { workflowError } from "@phasekit/core";
import { requestApproval } from "../run/control-requests.js";
import { controlTarget } from "./control-actions.js";
import { locateRun, type Roots } from "./run-view.js";

/** The page's request body: `{ data?, reject?, reason?, name? }`. */
export async function approveFromPage(roots: Roots, id: string, body: Record<string, unknown>): Promise<object> {
  const { data, reject, reason, name } = body;
  const bad = (field: string, hint: string): never => {
    throw workflowError("cli", "INVALID_OPTIONS", `approve: ${field} is not valid.`, { field, hint });
  };
  if (reject !== undefined && typeof reject !== "boolean") bad("reject", "true to reject, false or absent to approve");
  if (reason !== undefined && typeof reason !== "string") bad("reason", "a sentence, or nothing");
  if (name !== undefined && (typeof name !== "string" || name.trim() === "")) bad("name", "the wait's name (a phase id for a gate), or nothing");
  const location = await locateRun(roots, id);
  const decision = reject === true ? ("reject" as const) : ("approve" as const);
  const words = typeof reason === "string" && reason.trim() !== "" ? reason.trim() : undefined;
  const request = await requestApproval({
    ...(await controlTarget(roots, location.slug, id)),
    reason: words ?? `${decision === "approve" ? "approved" : "rejected"} from the inspector`,
    approval: { decision, ...(typeof name === "string" ? { name: name.trim() } : {}), ...(data === undefined ? {} : { data }) },
  });
  return { id: location.slug, action: "approve", decision, request };
}
