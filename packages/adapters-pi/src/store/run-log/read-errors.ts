/** Typed errors of run-log readers that are not about a file's content (format.ts `corrupt` is). */
import { workflowError, type WorkflowError } from "@phasekit/core";

/** A file the folder listed (or a head pinned) was gone when opened: a compaction of a newer holder removed it. */
export function vanished(file: string): WorkflowError {
  return workflowError("run-log", "READ_FAILED", `${file} was listed but is gone: a newer holder's compaction removed it while it was being read.`, {
    file,
    errno: "ENOENT",
    hint: "read the run again",
  });
}
