/**
 * The status line: the root workflow's name, then one part per level — a sub-workflow level as
 * `{name} [i/n]`, the phase as `{emoji} {name} [i/n]` (no leading space without an emoji), joined by " > ".
 * Each level counts within its own workflow: `Release Pipeline > Code Review [2/3] > 🔍 Static Analysis [1/2]`.
 */
import type { ActiveWorkflow, BreadcrumbItem } from "../transitions/resolve-active.js";

/** The status-bar text for a resolved run. */
export function statusLine(active: ActiveWorkflow): string {
  const parts = [active.definition.name];
  for (const item of active.breadcrumb) parts.push(statusPart(item));
  return parts.join(" > ");
}

/** One level of the status line. */
export function statusPart(item: BreadcrumbItem): string {
  const label = item.emoji === "" ? item.entryName : `${item.emoji} ${item.entryName}`;
  return `${label} [${item.index + 1}/${item.total}]`;
}
