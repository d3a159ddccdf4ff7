/**
 * The inspector's first screen in a real browser (Debian's chromium through playwright-core, as the browser
 * tests drive it): the time from a navigation to the run page until the first screen's step rows are in the DOM,
 * read in the page (performance.now() is measured from the navigation's start) by an observer installed before
 * the page's scripts run. Runs are measured interleaved round by round, each a fresh load (from about:blank)
 * once the previous page's timeline request has been answered. Each load also says when the page sent its request
 * for the run and when it was answered (the page's resource timing), so a slow first screen says where.
 */
import type { Browser, Page } from "playwright-core";
import { median, medianRatio } from "../../../bench/suites/interleave.js";
import { launchChromium } from "../test/cli/helpers/chromium.js";

declare const document: { querySelectorAll(s: string): { length: number }; getElementById(id: string): { textContent: string | null } | null };
declare const window: { __rows?: Array<[number, number]> };
declare const MutationObserver: new (seen: () => void) => { observe(target: unknown, options: object): void };

/** Installed before each document's scripts: each time the steps table's row count changes, the count and when (ms since navigation). */
function observeRows(): void {
  const list: Array<[number, number]> = [];
  window.__rows = list;
  let last = 0;
  new MutationObserver(() => {
    const n = document.querySelectorAll("#steps tbody tr").length;
    if (n !== last) list.push([(last = n), performance.now()]);
  }).observe(document, { subtree: true, childList: true });
}

/** Where a first screen's time went (ms since the navigation): the run's API request sent, and answered. */
export interface FirstScreenParts {
  asked: number;
  answered: number;
}

/** Median ms per run id (and the medians of its parts), or why no browser could be used. */
export async function firstScreenInBrowser(
  pageUrl: (id: string) => string,
  runs: Record<string, number>,
  rounds: number,
): Promise<{ ok: true; ms: Record<string, number>; parts: Record<string, FirstScreenParts>; ratio: (a: string, b: string) => number } | { ok: false; whyNot: string }> {
  const launched = await launchChromium();
  if (launched.browser === null) return { ok: false, whyNot: launched.whyNot };
  const browser: Browser = launched.browser;
  try {
    const page = await browser.newPage();
    await page.addInitScript(observeRows);
    const names = Object.keys(runs);
    const samples: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
    const asked: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
    const answered: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
    const warmup = 2;
    for (let round = 0; round < warmup + rounds; round++) {
      for (let k = 0; k < names.length; k++) {
        const name = names[(round + k) % names.length] as string;
        const seen = await loadOnce(page, pageUrl(name), runs[name] as number);
        if (round < warmup) continue;
        (samples[name] as number[]).push(seen.rows);
        (asked[name] as number[]).push(seen.asked);
        (answered[name] as number[]).push(seen.answered);
      }
    }
    const ms = Object.fromEntries(names.map((n) => [n, median(samples[n] as number[])]));
    const parts = Object.fromEntries(names.map((n) => [n, { asked: median(asked[n] as number[]), answered: median(answered[n] as number[]) }]));
    const ratio = (a: string, b: string) => medianRatio(samples[a] as number[], samples[b] as number[]);
    return { ok: true, ms, parts, ratio };
  } finally {
    await browser.close();
  }
}

async function loadOnce(page: Page, url: string, rows: number): Promise<FirstScreenParts & { rows: number }> {
  await page.goto("about:blank");
  await page.goto(url);
  await page.waitForFunction((min) => (window.__rows ?? []).some(([n]) => n >= min), rows, { timeout: 30_000 });
  const seen = (await page.evaluate(() => window.__rows ?? [])) as Array<[number, number]>;
  const hit = seen.find(([n]) => n >= rows);
  if (hit === undefined) throw new Error(`${url}: the rows were never seen by the observer`);
  // The run's API request as the page's resource timing saw it (the first one: the page's own first ask).
  const api = (await page.evaluate(() =>
    performance
      .getEntriesByType("resource")
      .map((e) => [e.name, e.startTime, (e as unknown as { responseEnd: number }).responseEnd] as const)
      .find(([name]) => /\/api\/runs\/[^/?]+$/.test(name)),
  )) as readonly [string, number, number] | undefined;
  if (api === undefined) throw new Error(`${url}: the run's API request was not seen`);
  // The page then asks for the run's timeline; it is let finish, so its work on the server does not fall into
  // the next sample.
  await page.waitForFunction(() => (document.getElementById("timeline-now")?.textContent ?? "") !== "", undefined, { timeout: 30_000 });
  return { rows: hit[1], asked: api[1], answered: api[2] };
}
