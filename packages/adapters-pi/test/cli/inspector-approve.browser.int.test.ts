/**
 * Issue 21: approval from the inspector page, in a real browser (Debian's chromium driven by playwright-core). A
 * run waits in `ctx.waitForApproval` in another process; the page shows what it asks and a payload form built from
 * the wait's JSON Schema; a value the schema refuses is filed and dropped by the run (it keeps waiting), then an
 * approval with good values from the form ends the wait with that payload. With PHASEKIT_UPDATE_DOCS=1 its
 * screenshot (the filled form) goes to docs/images/.
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { inspectorInChromium } from "./helpers/inspector-in-chromium.js";
import { spawnLockChild, type LockChild } from "../helpers/lock-children.js";

let child: LockChild | undefined;
const ui = inspectorInChromium("inspector approval browser test");
const docsShot = (name: string) => (process.env["PHASEKIT_UPDATE_DOCS"] === "1" ? fileURLToPath(new URL(`../../../../docs/images/${name}`, import.meta.url)) : path.join(ui.repo, name));

afterAll(() => {
  if (child?.proc.exitCode === null) child.proc.kill("SIGKILL");
});

describe("inspector: approve a waiting run", () => {
  it("files a decision from the form built from the wait's schema; a refused value keeps the run waiting, a good one ends the wait with it", async (ctx) => {
    const browser = ui.browser;
    if (browser === null) return ctx.skip(ui.whyNot);
    child = spawnLockChild("run-waiter.mjs", [ui.repo, "waits", "approval-form"]);
    await child.waitFor(/"event":"waiting"/);
    const page = await browser.newPage();
    const pageErrors: string[] = [];
    page.on("pageerror", (e) => pageErrors.push(String(e)));
    await page.goto(`${ui.inspector.url}#/run/waits`);
    await page.waitForSelector("#approval");
    expect(await page.textContent("#approval")).toContain("It asks: Ship it?");
    expect(await page.textContent("#journal")).toContain("waits for approval ship: Ship it?");
    const decide = async (fields: { channel: string; replicas: string; notify?: boolean; note?: string }) => {
      await page.click("#approve-open");
      expect(await page.inputValue("#approve-name")).toBe("ship");
      // The schema is in the subset the form knows: one field per property, no JSON box.
      expect(await page.$("#approve-data")).toBeNull();
      expect(await page.getAttribute("#approve-field-replicas", "type")).toBe("number");
      expect(await page.getAttribute("#approve-field-notify", "type")).toBe("checkbox");
      await page.selectOption("#approve-field-channel", { label: JSON.stringify(fields.channel) });
      await page.fill("#approve-field-replicas", fields.replicas);
      if (fields.notify === true) await page.check("#approve-field-notify");
      if (fields.note !== undefined) await page.fill("#approve-field-note", fields.note);
      if (fields.note !== undefined) await page.screenshot({ path: docsShot("inspector-approve.png") });
      await page.click("#approve-yes");
      await page.waitForSelector("#action-done");
      expect(await page.textContent("#action-done")).toContain("approval filed for run waits");
    };
    await decide({ channel: "stable", replicas: "0" });
    // The run checks the payload against its schema (replicas has minimum 1), refuses it (journal
    // approval-refused, in words on the page) and keeps waiting: the page shows the refusal.
    await page.waitForFunction(() => (globalThis as unknown as { document: { getElementById(id: string): { textContent: string | null } | null } }).document.getElementById("journal")?.textContent?.includes("approval ship refused, still waiting") ?? false, undefined, { timeout: 20_000 });
    expect(await page.textContent("#journal")).toContain("replicas");
    expect(child.proc.exitCode).toBeNull();
    await decide({ channel: "beta", replicas: "3", notify: true, note: "after the freeze" });
    const end = JSON.parse(await child.waitFor(/"event":"end"/)) as { status: string; result: { outcome: unknown } };
    expect(end.status).toBe("completed");
    // Empty optional fields (ratio) are left out; the checkbox and the typed number arrive as JSON values.
    expect(end.result.outcome).toEqual({ status: "approved", data: { channel: "beta", replicas: 3, notify: true, note: "after the freeze" } });
    // Outside the subset (a nested object, an array, a required field with no property, no schema) the page
    // keeps the JSON box: the generator answers null.
    // A string, so the test runner leaves its import() to the page (the page's CSP refuses inline scripts).
    const { fallbacks, subset } = (await page.evaluate(`(async () => {
      const { schemaForm } = await import("/schema-form.js");
      const el = (tag, attrs = {}, ...kids) => { const n = document.createElement(tag); for (const [k, v] of Object.entries(attrs)) n.setAttribute(k, v); n.append(...kids.flat().filter((k) => k !== "")); return n; };
      const cases = [{ type: "object", properties: { a: { type: "object" } } }, { type: "array" }, { type: "object", properties: { a: { type: "string" } }, required: ["b"] }, null, { type: "object", properties: { a: { type: "string", enum: [{}] } } }];
      return { fallbacks: cases.map((c) => schemaForm(c, el) === null), subset: schemaForm({ type: "object", properties: { a: { type: "string" } } }, el)?.value() };
    })()`)) as { fallbacks: boolean[]; subset: unknown };
    expect(fallbacks).toEqual([true, true, true, true, true]);
    expect(subset).toEqual({});
    expect(pageErrors).toEqual([]);
    await page.close();
  }, 60_000);
});
