/**
 * Facts computed once per compile over the (acyclic) reference graph of the healthy workflows: how deep each
 * workflow nests, and how many concrete phases it has with every reference expanded. Memoised and iterative,
 * so 26 levels of two references each cost 52 visits, not 2^26 (the old count walked every expansion).
 */
import type { WorkflowDefinition } from "./schema.js";

/** Per workflow key: nesting depth (1 = no references) and expanded concrete phase count. */
export interface GraphFacts {
  readonly depth: Map<string, number>;
  readonly phaseCount: Map<string, number>;
}

/** Folds `workflows` bottom-up. Only call with an acyclic, closed set (every reference present). */
export function graphFacts(workflows: ReadonlyMap<string, WorkflowDefinition>): GraphFacts {
  const depth = new Map<string, number>();
  const phaseCount = new Map<string, number>();
  for (const root of workflows.keys()) {
    if (depth.has(root)) continue;
    const stack: Array<{ key: string; expanded: boolean }> = [{ key: root, expanded: false }];
    while (stack.length > 0) {
      const frame = stack[stack.length - 1] as { key: string; expanded: boolean };
      const def = workflows.get(frame.key);
      if (def === undefined || depth.has(frame.key)) {
        stack.pop();
        continue;
      }
      if (!frame.expanded) {
        frame.expanded = true;
        for (const entry of def.phases) if ("subworkflow" in entry && !depth.has(entry.subworkflow)) stack.push({ key: entry.subworkflow, expanded: false });
        continue;
      }
      stack.pop();
      let d = 1;
      let n = 0;
      for (const entry of def.phases) {
        if ("subworkflow" in entry) {
          d = Math.max(d, 1 + (depth.get(entry.subworkflow) ?? 0));
          n += phaseCount.get(entry.subworkflow) ?? 0;
        } else n += 1;
      }
      depth.set(frame.key, d);
      phaseCount.set(frame.key, n);
    }
  }
  return { depth, phaseCount };
}
