/** `validate` and `diagram`: workflow definition folders in the pi extension's format. */
import path from "node:path";
import type { Command } from "commander";
import { migrateState } from "@phasekit/core";
import { loadDefinitionFolders } from "../definitions/folders.js";
import { common } from "./context.js";
import { buildDiagram, toMermaid } from "./diagram.js";
import { fail, JSON_SCHEMAS, printJson, progress, EXIT, type CliIo } from "./io.js";
import { runDetail } from "./run-view.js";

/** Registers `validate` and `diagram`; `setExit` records the exit code of a command that found problems. */
export function registerDefinitionCommands(program: Command, io: CliIo, setExit: (code: number) => void): void {
  program
    .command("validate")
    .description("compile workflow definition folders (workflow.yaml + phase Markdown): every problem with file and line")
    .argument("[dirs...]", "definition folders: a workflow folder, or a folder of them (default: --defs, else pi's roots)")
    .option("--strict", "warnings fail too (exit 1): a key that is no field (a typo such as loopabel), a field pi ignores; what the shipped JSON Schemas reject")
    .action(async (dirs: string[], o: { strict?: boolean }, cmd: Command) => {
      const c = common(cmd, io);
      const targets = dirs.length > 0 ? dirs.map((d) => path.resolve(io.cwd, d)) : c.defDirs;
      if (targets.length === 0) fail("cli", "NOT_FOUND", "no definition folders: pass DIR, or --defs DIR, or create .pi/workflows.", { field: "dirs" });
      const bar = progress(io, "validating");
      const loaded = loadDefinitionFolders(targets, { onFolder: (n) => bar.tick(n) });
      bar.done();
      const workflows = [...loaded.registry.workflows.keys()].sort();
      // Warnings (a field pi-workflows ignores too, a typo key, a shared command, an unknown template variable) are
      // told, not failed: pi loads such a folder. --strict fails them too, as the shipped JSON Schemas do.
      const errors = o.strict === true ? loaded.problems : loaded.problems.filter((p) => p.severity !== "warning");
      if (errors.length > 0) setExit(EXIT.failed);
      if (c.json) return printJson(io, JSON_SCHEMAS.validate, { ok: errors.length === 0, folders: loaded.folders, workflows, problems: loaded.problems });
      for (const p of loaded.problems) {
        const where = `${p.file}:${p.line}`;
        const text = p.message.startsWith(where) ? p.message : `${where}: ${p.message.replace(/^\[[^\]]*\] (\[[^\]]*\] )?/, "")}`;
        io.stdout.write(`${p.severity === "warning" ? "warning: " : ""}${text}${p.hint ? `\n  hint: ${p.hint}` : ""}\n`);
      }
      const n = errors.length;
      const w = loaded.problems.length - n;
      io.stdout.write(`${loaded.folders} workflow folder(s), ${workflows.length} compiled, ${n} problem${n === 1 ? "" : "s"}${w > 0 ? `, ${w} warning${w === 1 ? "" : "s"}` : ""}\n`);
    });

  program
    .command("diagram")
    .description("a Mermaid flowchart of a workflow (sub-workflows as subgraphs, loops drawn); for a run, its position highlighted")
    .argument("<workflow-or-run>", "a workflow key, or a run id / slug / path")
    .action(async (what: string, _o: unknown, cmd: Command) => {
      const c = common(cmd, io);
      const loaded = loadDefinitionFolders(c.defDirs);
      let diagram = loaded.registry.workflows.has(what) ? buildDiagram(loaded.registry, what) : null;
      let run: string | null = null;
      if (diagram === null) {
        const detail = await runDetail(c.roots, what, io.now().getTime()).catch(() => null);
        if (detail === null) fail("cli", "NOT_FOUND", `${JSON.stringify(what)} is neither a workflow key in ${c.defDirs.join(", ") || "(no definition folders)"} nor a run.`, { value: what, hint: "pass --defs DIR for definitions elsewhere" });
        const raw = detail.metadata?.state;
        if (raw === undefined) fail("cli", "NOT_FOUND", `run ${detail.summary.id} carries no workflow state to draw.`, { value: what });
        const state = migrateState(raw);
        if (!state.ok) throw state.error;
        diagram = buildDiagram(loaded.registry, state.state.workflowKey, state.state);
        if (diagram === null) fail("cli", "NOT_FOUND", `run ${detail.summary.id} runs workflow ${state.state.workflowKey}, which is not in ${c.defDirs.join(", ") || "(no definition folders)"}.`, { value: state.state.workflowKey, hint: "pass --defs DIR" });
        run = detail.summary.id;
      }
      const mermaid = toMermaid(diagram);
      if (c.json) return printJson(io, JSON_SCHEMAS.diagram, { workflowKey: diagram.workflowKey, run, current: diagram.current, nodes: diagram.nodes, mermaid });
      io.stdout.write(mermaid);
    });
}
