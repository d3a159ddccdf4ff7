/**
 * A workflow definition as a tree of nodes (phases, sub-workflows expanded as groups, loop edges, a gate's routes:
 * onFail / onReject) and as a Mermaid flowchart, with a run's current position marked. The inspector page draws
 * the same tree (a phase's gates and routes are in its label there).
 */
import { isSubworkflowRef, type WorkflowRegistry, type WorkflowState } from "@phasekit/core";

/** One node: a phase, or a sub-workflow group holding its own nodes. Ids are path indexes: `p0`, `p1_2`. */
export interface DiagramNode {
  id: string;
  kind: "phase" | "subworkflow";
  label: string;
  /** The workflow a group stands for (sub-workflows only). */
  workflowKey?: string;
  children?: DiagramNode[];
  /** True when this group's workflow may loop back to its start. */
  loopable?: boolean;
  /** The phase's gates, in the order they are judged. */
  gates?: Array<"verify" | "approve">;
  /** Where a gate's "no" sends the run: node ids in the same workflow (core's `route`). */
  routes?: Array<{ on: "fail" | "reject"; to: string }>;
}

/** A workflow as drawn. */
export interface Diagram {
  workflowKey: string;
  name: string;
  loopable: boolean;
  nodes: DiagramNode[];
  /** The node of the run's position (the innermost entered level), when drawn for a run. */
  current: string | null;
}

/** Builds the diagram of `key`; a reference cycle cannot occur (compiled registries have none). */
export function buildDiagram(registry: WorkflowRegistry, key: string, state: WorkflowState | null = null): Diagram | null {
  const def = registry.workflows.get(key);
  if (def === undefined) return null;
  const nodesOf = (wkey: string, prefix: string): DiagramNode[] => {
    const d = registry.workflows.get(wkey);
    if (d === undefined) return [];
    return d.phases.map((entry, i) => {
      const id = `${prefix}${prefix === "p" ? "" : "_"}${i}`;
      if (isSubworkflowRef(entry)) {
        const sub = registry.workflows.get(entry.subworkflow);
        return { id, kind: "subworkflow", label: sub?.name ?? entry.subworkflow, workflowKey: entry.subworkflow, loopable: sub?.loopable ?? false, children: nodesOf(entry.subworkflow, id) };
      }
      const name = entry.emoji ? `${entry.emoji} ${entry.name}` : entry.name;
      const g = entry.gates;
      if (g === undefined) return { id, kind: "phase", label: name };
      const gates = [...(g.verify ? (["verify"] as const) : []), ...(g.approve ? (["approve"] as const) : [])];
      const idOf = (k: number) => `${prefix}${prefix === "p" ? "" : "_"}${k}`;
      const targets = ([["fail", g.onFail], ["reject", g.onReject]] as const).flatMap(([on, t]) => {
        const k = t === undefined ? -1 : d.phases.findIndex((p) => !isSubworkflowRef(p) && p.id === t);
        const phase = d.phases[k];
        return phase === undefined || isSubworkflowRef(phase) ? [] : [{ on, to: idOf(k), name: phase.name }];
      });
      const routes = targets.map(({ on, to }) => ({ on, to }));
      const words = targets.map((r) => `${r.on === "fail" ? "fails" : "rejected"} → ${r.name}`);
      return { id, kind: "phase", label: `${name} (${[gates.join(" + "), ...words].join("; ")})`, gates, routes };
    });
  };
  const current = state === null || state.workflowKey !== key ? null : `p${state.currentPath.map((s) => s.phaseIndex).join("_")}`;
  return { workflowKey: key, name: def.name, loopable: def.loopable, nodes: nodesOf(key, "p"), current };
}

/** The diagram as Mermaid flowchart text. */
export function toMermaid(d: Diagram): string {
  const out = ["flowchart LR", `  start((start))`];
  const label = (s: string) => `"${s.replace(/"/g, "#quot;")}"`;
  const emit = (nodes: readonly DiagramNode[], indent: string, loopable: boolean) => {
    for (const n of nodes) {
      if (n.kind === "phase") out.push(`${indent}${n.id}[${label(n.label)}]`);
      else {
        out.push(`${indent}subgraph ${n.id}[${label(n.label)}]`, `${indent}  direction LR`);
        emit(n.children ?? [], `${indent}  `, n.loopable === true);
        out.push(`${indent}end`);
      }
    }
    for (const n of nodes) for (const r of n.routes ?? []) out.push(`${indent}${n.id} -. ${r.on === "fail" ? "verify fails" : "rejected"} .-> ${r.to}`);
    for (let i = 1; i < nodes.length; i++) out.push(`${indent}${(nodes[i - 1] as DiagramNode).id} --> ${(nodes[i] as DiagramNode).id}`);
    const first = nodes[0];
    const last = nodes[nodes.length - 1];
    if (loopable && first !== undefined && last !== undefined) out.push(`${indent}${last.id} -. loop .-> ${first.id}`);
  };
  emit(d.nodes, "  ", d.loopable);
  const first = d.nodes[0];
  const last = d.nodes[d.nodes.length - 1];
  if (first !== undefined) out.push(`  start --> ${first.id}`);
  if (last !== undefined) out.push(`  ${last.id} --> done((done))`);
  if (d.current !== null) out.push("  classDef current fill:#fde68a,stroke:#b45309,stroke-width:3px", `  class ${d.current} current`);
  return `${out.join("\n")}\n`;
}
