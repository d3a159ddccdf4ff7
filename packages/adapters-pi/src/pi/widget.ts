/**
 * The phase list widget: every entry of the current scope, marked done / current / to come, under the
 * breadcrumb of the enclosing scopes, so the user sees previous, current and next at a glance.
 */
import type { ActiveWorkflow } from "./core-bridge.js";

/** Lines of the widget for a resolved run. */
export function phaseListWidget(a: ActiveWorkflow): string[] {
  const crumbs = a.breadcrumb.filter((c) => c.entered);
  const inner = crumbs[crumbs.length - 1];
  const lines: string[] = [];
  const path = crumbs.slice(0, -1).map((c) => `${c.workflowName} [${c.index + 1}/${c.total}]`);
  lines.push(path.length === 0 ? `Workflow: ${a.definition.name}` : `Workflow: ${path.join(" > ")} > ${a.scope.name}`);
  const current = inner?.index ?? 0;
  a.scope.phases.forEach((entry, i) => {
    const label = "subworkflow" in entry ? `↳ ${entry.subworkflow}` : `${entry.emoji === "" ? "" : `${entry.emoji} `}${entry.name}`;
    const mark = i < current ? "✓" : i === current ? "▶" : "·";
    lines.push(`  ${mark} ${label}`);
  });
  return lines;
}
