/**
 * The forks of a run, for the inspector's tree of forks: the runs whose history starts with a `forked` event
 * naming it. On a plan folder each run's history is opened (its index only; the one event value read when
 * present); a store named by URL answers with its own read (`PlanStore.listForks`, one statement on PostgreSQL),
 * and a store without one does not offer the list (null): reading every run's journal is not cheap.
 */
import path from "node:path";
import { FORKED_EVENT } from "../run/fork-parts.js";
import { readRunLog } from "../store/run-log/reader.js";
import { storeOf, type Roots } from "./run-view.js";
import { storeAt } from "./store-runs.js";

/** One fork of a run: its id and the step it was forked at. */
export interface ForkLink {
  id: string;
  at: string;
}

/** The runs forked from `slug` (sorted by id), or null when the store cannot say cheaply. */
export async function forksOf(roots: Roots, slug: string): Promise<ForkLink[] | null> {
  if (roots.store !== undefined) {
    const store = await storeAt(roots.store, roots.repoRoot);
    if (store.listForks === undefined) return null;
    try {
      return (await store.listForks(slug)).map((f) => ({ id: f.slug, at: f.at }));
    } catch (error) {
      // A store opened by URL answers every method; one it does not have is INVALID_CONFIG naming it.
      if ((error as { code?: unknown }).code === "INVALID_CONFIG" && String((error as Error).message).includes("listForks")) return null;
      throw error;
    }
  }
  const store = storeOf(roots);
  try {
    const out: ForkLink[] = [];
    for (const entry of await store.list()) {
      if (entry.slug === slug) continue;
      const view = await readRunLog(path.join(store.planRoot, entry.slug)).catch(() => null);
      if (view === null) continue;
      try {
        for (const d of view.events(FORKED_EVENT) as Array<{ from?: unknown; at?: unknown } | null>) {
          if (d?.from === slug && typeof d.at === "string") out.push({ id: entry.slug, at: d.at });
        }
      } finally {
        view.close();
      }
    }
    return out;
  } finally {
    await store.close();
  }
}
