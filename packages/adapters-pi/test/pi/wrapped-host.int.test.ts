/**
 * Real pi CLI, both hosts: the extension composed through a wrapper of pi's API (its `on` returns nothing) sends
 * exactly as many reminders as the cap notice says.
 */
import * as path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { PiHost } from "../../../../examples/pi/pi-process.js";
import { HOSTS } from "./hosts.js";
import { e2eProject, until } from "./e2e/project.js";

const WRAPPED = path.join(import.meta.dirname, "fixtures", "wrapped-extension.mjs");

describe.each(HOSTS)("pi $name: a wrapped pi API", ({ get }) => {
  let host: PiHost;
  beforeAll(() => {
    host = get();
  }, 300_000);

  it("sends as many reminders as the cap notice says", async () => {
    const p = await e2eProject(host, "wrapped");
    try {
      p.model.fallback = { text: "I think I am finished." };
      const pi = p.start({ extension: WRAPPED, env: { PHASEKIT_COUNTDOWN_MS: "150", PHASEKIT_MAX_REMINDERS: "2" } });
      pi.send({ type: "prompt", message: "/workflow ship Add a --version flag" });
      const cap = () => p.session().find((e) => e["type"] === "custom_message" && e["customType"] === "workflow:notice" && String(e["content"]).includes("stopped reminding"));
      await until(() => cap() !== undefined, "the cap notice", 30_000);
      expect(String(cap()?.["content"])).toContain("2 reminder(s) without progress");
      await new Promise((r) => setTimeout(r, 1000)); // nothing may follow the cap
      expect(p.model.requests).toHaveLength(1 + 2);
    } finally {
      await p.close();
    }
  }, 45_000);
});
