/**
 * The live run page's journal in chromium: each change the event stream reports refreshes the page, and the
 * refresh asks only for the journal entries past those the page holds (`journalAfter`, `journalState`), so the
 * answer carries the new entries and not every generation's document again; the page shows the whole journal,
 * each entry told as a whole read tells it. The run is moved on only once the page shows the entry before.
 */
import { describe, expect, it } from "vitest";
import { createFsPlanStore } from "../../src/store/plan-store.js";
import { journalSentences } from "../../src/cli/journal-text.js";
import { sampleMetadata } from "../helpers/metadata-fixtures.js";
import { inspectorInChromium } from "./helpers/inspector-in-chromium.js";

const ui = inspectorInChromium("inspector journal browser test");

describe("the live run page's journal in chromium", () => {
  it("a refresh fetches only the entries past those the page holds, and the page shows the whole journal", async (ctx) => {
    const browser = ui.browser;
    if (browser === null) return ctx.skip(ui.whyNot);
    const store = createFsPlanStore({ repoRoot: ui.repo });
    const l = await store.lock("live-j", { owner: { tool: "driver" } });
    if (!l.ok) throw l.error;
    const via = l.lock.store ?? store;
    let generation: number | null = null;
    const write = async (i: number) => {
      const w = await via.writeMetadata("live-j", sampleMetadata("live-j", i, 4000), generation);
      if (!w.ok) throw w.error;
      generation = w.metadata.generation;
      const e = await via.appendJournal("live-j", { generation, at: new Date().toISOString(), event: `tick-${i}`, data: { i } });
      if (!e.ok) throw e.error;
    };
    await write(0);

    const page = await browser.newPage();
    const answers: Array<{ url: string; journal: number; states: number }> = [];
    page.on("response", (r) => {
      const url = new URL(r.url());
      if (url.pathname !== "/api/runs/live-j") return;
      void r.json().then(
        (b: { journal: Array<{ event: string }> }) => answers.push({ url: url.search, journal: b.journal.length, states: b.journal.filter((e) => e.event === "metadata").length }),
        () => undefined,
      );
    });
    await page.goto(`${ui.inspector.url}#/run/live-j`);
    await page.waitForSelector('#journal li[data-event="tick-0"]');
    for (let i = 1; i <= 4; i++) {
      await write(i);
      await page.waitForSelector(`#journal li[data-event="tick-${i}"]`);
    }
    const shown = await page.$$eval("#journal li .sentence", (s) => s.map((x) => x.textContent));
    const whole = await store.readJournal("live-j");
    if (!whole.ok) throw whole.error;
    expect(shown).toEqual(journalSentences(whole.entries));
    // The first answer is the whole journal; each later one holds only what came after the page's last entry
    // (and, told against it, no old generation).
    const refreshes = () => answers.filter((a) => a.url.includes("journalAfter="));
    // Every entry after the first two came in exactly one refresh (an answer's body is read as it arrives).
    await expect.poll(() => refreshes().reduce((n, a) => n + a.journal, 0)).toBe(whole.entries.length - 2);
    expect(refreshes().length).toBeGreaterThanOrEqual(4);
    for (const a of refreshes()) expect(a.states, a.url).toBeLessThanOrEqual(1);
    await page.close();
    await l.lock.release();
    await store.close();
  });
});
