/** The composition example of docs/pi.md: the parts work inside another extension. */
import { afterEach, beforeEach, expect, it } from "vitest";
import myExtension from "../../../../examples/pi/compose-extension.js";
import { createFakePi } from "./helpers/fake-pi.js";
import { tempProject } from "./helpers/setup.js";

let project: ReturnType<typeof tempProject>;
beforeEach(() => {
  project = tempProject();
});
afterEach(() => project.cleanup());

it("registers the workflow parts plus its own command, which sees the same state", async () => {
  const pi = createFakePi({ cwd: project.cwd });
  myExtension(pi.api);
  expect([...pi.commands.keys()].sort()).toEqual(["cancel-workflow", "phase", "workflow", "workflow-approve", "workflow-resume", "workflow-status"]);
  await pi.emit("session_start", {});
  await pi.command("workflow", "ship Add a flag");
  await pi.command("phase");
  expect(pi.notices.at(-1)?.text).toBe("ship: ship[0] (running)");
});
