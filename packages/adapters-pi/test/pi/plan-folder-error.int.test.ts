/**
 * Real pi CLI, both hosts: a plan folder that cannot be used is reported as what it is (the file and the fix),
 * never as "driven elsewhere" when nobody else holds the run; the session keeps driving the run and can cancel it.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { PiHost } from "../../../../examples/pi/pi-process.js";
import { HOSTS } from "./hosts.js";
import { e2eProject, notices, until } from "./e2e/project.js";

describe.each(HOSTS)("pi $name: plan-folder errors", ({ get }) => {
  let host: PiHost;
  beforeAll(() => {
    host = get();
  }, 300_000);

  it("ai_plan made a plain file: after -c a clear error naming the file and the fix, and /cancel-workflow still cancels", async () => {
    const p = await e2eProject(host, "pf-error");
    try {
      p.model.push({ text: "planning" });
      const a = p.start();
      a.send({ type: "prompt", message: "/workflow ship Add a flag" });
      await until(() => p.session().some((e) => e["type"] === "message"), "the first reply in the session");
      await a.kill("SIGKILL");
      const plans = path.join(p.cwd, "ai_plan");
      fs.rmSync(plans, { recursive: true, force: true });
      fs.writeFileSync(plans, "not a folder\n");

      const b = p.start({ continueSession: true });
      const said = await b.waitFor((l) => l["method"] === "notify" && String(l["message"]).includes("plan folder"), 20_000, "the plan-folder notice");
      const text = String(said["message"]);
      expect(text).toContain(plans);
      expect(text).toContain("is a file, not a folder");
      expect(notices(b).join("\n")).not.toContain("driven elsewhere");
      b.send({ type: "prompt", message: "/cancel-workflow" });
      await until(() => p.lastState()?.["status"] === "cancelled", "the run cancelled in the session");
      expect(notices(b).join("\n")).not.toContain("driven by another session");
      expect(fs.readFileSync(plans, "utf8")).toBe("not a folder\n");
    } finally {
      await p.close();
    }
  }, 50_000);
});
