/** `PlanStore.list()` on disk: every run folder of the plan root with its metadata, or the error reading it. */
import path from "node:path";
import { isWorkflowError, workflowError } from "@phasekit/core";
import { fsErrorCode, type FsPort } from "../io/fs-port.js";
import { validateSlug } from "../io/plan-paths.js";
import type { ReadMetadataResult } from "./metadata.js";
import type { PlanRunEntry } from "./plan-store-port.js";

/**
 * The runs of `planRoot` by slug: folders only (a file, a link or a name that is no slug is not a run), each read
 * by `readMeta` (through the lease's history when this store holds one); one unreadable run never hides the rest.
 */
export async function listPlanRuns(fs: FsPort, planRoot: string, readMeta: (dir: string) => Promise<ReadMetadataResult>): Promise<PlanRunEntry[]> {
  let names: string[];
  try {
    names = await fs.readdir(planRoot);
  } catch (error) {
    if (fsErrorCode(error) === "ENOENT") return [];
    throw workflowError("store", "READ_FAILED", `cannot list ${planRoot}: ${String(error)}`, { file: planRoot }, error);
  }
  const out: PlanRunEntry[] = [];
  for (const slug of names.sort()) {
    if (!validateSlug(slug).ok) continue;
    const st = await fs.lstat(path.join(planRoot, slug)).catch(() => undefined);
    if (st === undefined || !st.isDirectory()) continue;
    const r = await readMeta(path.join(planRoot, slug)).catch((error: unknown): ReadMetadataResult => {
      if (isWorkflowError(error)) return { ok: false, error };
      throw error;
    });
    out.push(r.ok ? { slug, ok: true, metadata: r.metadata } : { slug, ok: false, error: r.error });
  }
  return out;
}
