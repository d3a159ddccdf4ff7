/**
 * Real pi CLI, both hosts: a model that fails with a server error, which pi retries on its own (each try ends the
 * agent run on 0.73.1), gets one "ended with an error" notice per workflow state, not one per try.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { PiHost } from "../../../../examples/pi/pi-process.js";
import { HOSTS } from "./hosts.js";
import { e2eProject, notices, until } from "./e2e/project.js";

describe.each(HOSTS)("pi $name: errors and pi's auto-retry", ({ get }) => {
  let host: PiHost;
  beforeAll(() => {
    host = get();
  }, 300_000);

  it("says the agent ended with an error once, however often pi retried", async () => {
    const p = await e2eProject(host, "retry");
    try {
      fs.mkdirSync(p.agentDir, { recursive: true });
      fs.writeFileSync(path.join(p.agentDir, "settings.json"), JSON.stringify({ retry: { enabled: true, maxRetries: 3, baseDelayMs: 1 } }));
      p.model.fallback = { status: 500 };
      const pi = p.start();
      pi.send({ type: "prompt", message: "/workflow ship Add a flag" });
      await until(() => p.model.requests.length >= 4, "the first try and pi's 3 retries", 30_000);
      await pi.waitFor((l) => l["type"] === "auto_retry_end", 20_000, "pi giving up");
      await until(() => notices(pi).some((n) => n.includes("ended with an error")), "the notice", 5_000);
      await new Promise((r) => setTimeout(r, 500));
      expect(notices(pi).filter((n) => n.includes("ended with an error"))).toHaveLength(1);
    } finally {
      await p.close();
    }
  }, 45_000);
});
