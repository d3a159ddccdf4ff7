/**
 * Composing the workflow extension into another pi extension: the same runtime, tool, hooks and commands,
 * plus a rule of your own (here: a command that prints the current phase in one line). docs/pi.md quotes it.
 */
import { createCommands, createContinuation, createRuntime, createStepTool, registerHooks, registerRenderers, type PiApi } from "@phasekit/adapters-pi/pi";

/** A pi extension factory: phasekit workflows with a `/phase` command of its own. */
export default function myExtension(pi: PiApi): void {
  const rt = createRuntime(pi, { maxReminders: 2, planRoot: false });
  const cont = createContinuation(rt);
  registerHooks(pi, rt, cont);
  pi.registerTool(createStepTool(rt, cont));
  for (const [name, command] of Object.entries(createCommands(rt, cont))) pi.registerCommand(name, command);
  registerRenderers(pi);
  pi.registerCommand("phase", {
    description: "Print the current workflow phase",
    async handler(_args, ctx) {
      const s = rt.state;
      const top = s?.currentPath[s.currentPath.length - 1];
      ctx.ui.notify(s === null || top === undefined ? "no workflow" : `${s.workflowKey}: ${top.workflowKey}[${top.phaseIndex}] (${s.status})`, "info");
    },
  });
}
