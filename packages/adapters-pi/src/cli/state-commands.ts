/** `state show|set|check`, `gc`, `rm` and `why`: a run's stored state for pipes, retention, and a step's reuse decision. */
import type { Command } from "commander";
import { migrateState } from "@phasekit/core";
import { readRunStateFrom, writeRunStateTo } from "../run/state-io.js";
import { fingerprint } from "../engine/fingerprint.js";
import { createFsPlanStore } from "../store/plan-store.js";
import { common } from "./context.js";
import { CLI_TOOL } from "./control-commands.js";
import { parseDuration } from "./format.js";
import { gc } from "../store/retention.js";
import type { GcEntry, GcKeptReason } from "../engine/retention-policy.js";
import { fail, JSON_SCHEMAS, plainMessage, printJson, progress, usage, type CliIo } from "./io.js";
import { withRunHistory } from "./history-view.js";
import { holderLive, locateRun, withRunStore } from "./run-view.js";
import { notOnStore, storeAt } from "./store-runs.js";
import { positiveInt } from "./runs-commands.js";
import { stepVerdict } from "./step-verdict.js";
import { forkOrigin } from "./time-travel.js";

/** Why `rm` kept a run, as the typed error it exits with. */
function refuseRm(slug: string, kept: GcEntry<GcKeptReason>): never {
  const why = kept.error === undefined ? "" : `: ${plainMessage(kept.error)}`;
  switch (kept.reason) {
    case "locked":
      return fail("cli", "LOCKED", `run ${slug} is locked by a live holder; it is not removed.`, { value: slug });
    case "active":
      return fail("cli", "NOT_FINISHED", `run ${slug} is ${kept.status ?? "not finished"}: only a finished run is removed.`, { value: slug, hint: `\`phasekit cancel ${slug}\` ends it first` });
    case "rerun-pending":
      return fail("cli", "NOT_FINISHED", `run ${slug} waits for a rerun: a step marked to run again (\`phasekit rerun --from\`) has not run since; it is kept.`, {
        value: slug,
        hint: `resume it (its owner runs it again, with reenter) to carry out the rerun; \`phasekit show ${slug}\` lists the superseded steps`,
      });
    case "no-metadata":
      return fail("cli", "NOT_FINISHED", `run ${slug} has no state yet: only a finished run is removed.`, { value: slug });
    case "corrupt-metadata":
      return fail("cli", "CORRUPT_FILE", `run ${slug} cannot be read, so it is kept${why}.`, { value: slug, hint: "look at the folder by hand" });
    case "changed-meanwhile":
      return fail("cli", "STALE_GENERATION", `run ${slug} changed while it was being removed; it is kept.`, { value: slug });
    default:
      return fail("cli", "WRITE_FAILED", `run ${slug} could not be removed${why}.`, { value: slug });
  }
}

/** Registers `state`, `gc`, `rm` and `why`. */
export function registerStateCommands(program: Command, io: CliIo): void {
  const state = program.command("state").description("a run's state (workflow.json) as canonical JSON, for pipes");
  state
    .command("show")
    .description("print the run's state on stdout")
    .argument("<run>", "run id, slug or path")
    .action(async (target: string, _o: unknown, cmd: Command) => {
      const c = common(cmd, io);
      const location = await locateRun(c.roots, target);
      const read = await withRunStore(c.roots, location, (store) => store.readMetadata(location.slug));
      if (!read.ok) throw read.error;
      if (read.metadata === null) fail("cli", "NOT_FOUND", `run ${target} has no workflow.json yet.`, { value: target });
      writeRunStateTo(read.metadata, io.stdout);
    });
  state
    .command("set")
    .description("store a state read from stdin (schema-checked, compare-and-set on its generation, under the run's lock)")
    .argument("<run>", "run id, slug or path")
    .action(async (target: string, _o: unknown, cmd: Command) => {
      const c = common(cmd, io);
      const location = await locateRun(c.roots, target);
      // On a terminal, a silent wait for stdin looks like a hang: say what is awaited.
      if (io.stdin.isTTY === true) io.stderr.write(`phasekit: reading run ${location.slug}'s state from stdin (end with Ctrl-D), e.g. phasekit state show ${location.slug} | jq … | phasekit state set ${location.slug}\n`);
      const input = await readRunStateFrom(io.stdin);
      if (!input.ok) throw input.error;
      const { schemaVersion: _v, generation, ...piped } = input.metadata;
      // The edit is the CLI's, made now: the journal dates and names it so, whatever the piped document said.
      const next = { ...piped, currentTool: CLI_TOOL, updatedAt: io.now().toISOString() };
      if (next.slug !== location.slug) fail("cli", "INVALID_OPTIONS", `the state on stdin is run ${next.slug}'s, not ${location.slug}'s.`, { field: "slug", value: next.slug });
      if (next.state !== undefined) {
        const core = migrateState(next.state);
        if (!core.ok) throw core.error;
      }
      await withRunStore(c.roots, location, async (store) => {
        const locked = await store.lock(location.slug, { owner: { tool: CLI_TOOL }, retries: 0 });
        if (!locked.ok) throw locked.error;
        try {
          const w = await (locked.lock.store ?? store).writeMetadata(location.slug, next, generation);
          if (!w.ok) throw w.error;
          if (c.json) writeRunStateTo(w.metadata, io.stdout);
          else io.stdout.write(`run ${location.slug}: state stored (generation ${w.metadata.generation})\n`);
        } finally {
          await locked.lock.release();
        }
      });
    });
  state
    .command("check")
    .description("read a state from stdin, validate it, print it again")
    .action(async () => {
      const r = await readRunStateFrom(io.stdin);
      if (!r.ok) throw r.error;
      writeRunStateTo(r.metadata, io.stdout);
    });

  program
    .command("gc")
    .description("remove finished runs beyond --keep or older than --older-than; never a running, paused, locked or unreadable one")
    .option("--keep <n>", "keep this many finished runs (newest)", positiveInt("--keep"))
    .option("--older-than <age>", "remove finished runs older than this (30d, 12h, 90m)")
    .option("--dry-run", "only say what would be removed")
    .action(async (o: { keep?: number; olderThan?: string; dryRun?: boolean }, cmd: Command) => {
      const c = common(cmd, io);
      const olderThan = o.olderThan === undefined ? undefined : parseDuration(o.olderThan);
      if (o.olderThan !== undefined && olderThan === undefined) usage(`--older-than ${o.olderThan} is not a duration such as 30d, 12h or 90m.`, { field: "older-than", value: o.olderThan });
      if (o.keep === undefined && olderThan === undefined) usage("gc needs --keep N or --older-than AGE (or both).", { field: "keep" });
      const store = c.roots.store === undefined ? createFsPlanStore(c.roots) : await storeAt(c.roots.store, c.roots.repoRoot);
      // gc reports no per-run progress; on a terminal, at least say what it is doing while it scans.
      const bar = progress(io, `gc: scanning ${store.planRoot}`);
      bar.tick(0);
      const report = await store
        .gc({ ...(o.keep === undefined ? {} : { keep: o.keep }), ...(olderThan === undefined ? {} : { olderThan }), now: () => io.now(), dryRun: o.dryRun === true })
        // A store named by URL is the process's, closed when the command ends.
        .finally(() => (bar.done(), c.roots.store === undefined ? store.close() : undefined));
      if (c.json) return printJson(io, JSON_SCHEMAS.gc, { dryRun: o.dryRun === true, removed: report.removed, kept: report.kept });
      const verb = o.dryRun === true ? "would remove" : "removed";
      for (const r of report.removed) {
        if (r.reason === "dead-fork") io.stdout.write(`${verb}  ${r.slug}  (dead-fork: the folder of a fork whose process is gone, never a run)\n`);
        else io.stdout.write(`${verb}  ${r.slug}  (${r.reason}, ${r.status ?? "?"}, updated ${r.updatedAt ?? "?"})\n`);
      }
      for (const k of report.kept) if (k.reason !== "within-limits") io.stdout.write(`kept  ${k.slug}  (${k.reason}${k.error ? `: ${k.error}` : ""})\n`);
      io.stdout.write(`${report.removed.length} ${verb}, ${report.kept.length} kept\n`);
    });

  program
    .command("rm")
    .description("remove one finished run (completed, cancelled, failed) by the rules of gc: under its lock; never a running, paused, crashed, locked or unreadable one")
    .argument("<run>", "run id, slug or path")
    .option("--dry-run", "only say whether it would be removed")
    .action(async (target: string, o: { dryRun?: boolean }, cmd: Command) => {
      const c = common(cmd, io);
      if (c.roots.store !== undefined) notOnStore("rm", `phasekit gc --keep N --store … removes finished runs there by the same rules`);
      const location = await locateRun(c.roots, target);
      const dryRun = o.dryRun === true;
      // gc's rules for one run (keep 0: any finished run is past the limit), so `rm` can never remove what gc keeps.
      const report = await gc({ planRoot: location.planRoot, keep: 0, only: location.slug, now: () => io.now(), dryRun });
      const kept = report.kept[0];
      if (kept !== undefined) refuseRm(location.slug, kept);
      if (c.json) return printJson(io, JSON_SCHEMAS.rm, { id: location.slug, runDir: location.runDir, dryRun, removed: true });
      io.stdout.write(`${dryRun ? "would remove" : "removed"} run ${location.slug} (${report.removed[0]?.status ?? "?"}, updated ${report.removed[0]?.updatedAt ?? "?"})\n`);
    });

  program
    .command("why")
    .description("would this step be reused or run again, and why (give --input to compare a new input's fingerprint)")
    .argument("<run>", "run id, slug or path")
    .argument("<step>", "step id")
    .option("--input <json>", "the input the step would be called with, as JSON")
    .action(async (target: string, stepId: string, o: { input?: string }, cmd: Command) => {
      const c = common(cmd, io);
      const location = await locateRun(c.roots, target);
      let given: string | null = null;
      if (o.input !== undefined) {
        try {
          given = fingerprint(JSON.parse(o.input));
        } catch (error) {
          usage(`--input is not JSON: ${(error as Error).message}`, { field: "input", value: o.input });
        }
      }
      const live = await holderLive(c.roots, location);
      const { record, verdict } = await withRunHistory(c.roots, location, async (h) => {
        const found = h.records.find((r) => r.stepId === stepId) ?? null;
        return { record: found, verdict: await stepVerdict(found, given, { live, checkOutput: h.checkOutput }) };
      });
      const forkedFrom = await forkOrigin(c.roots, location, record);
      if (forkedFrom !== null) verdict.explanation += `; its record was copied from run ${forkedFrom.run} when this run was forked from it at ${forkedFrom.at}`;
      if (c.json) return printJson(io, JSON_SCHEMAS.why, { id: location.slug, stepId, ...verdict, givenInputFingerprint: given, record, forkedFrom });
      io.stdout.write(`step ${stepId} of run ${location.slug}: ${verdict.decision} (${verdict.reason})\n  ${verdict.explanation}\n`);
    });
}
