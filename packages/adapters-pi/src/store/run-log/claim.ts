/**
 * Claiming a run: the next epoch's segment is created with O_EXCL (two claimants can never share an epoch),
 * and only then is the history read and pinned in the new segment's head. That order is the fence: a displaced
 * holder's record is either in the bytes read here (so it is accepted, pinned and part of the new history) or
 * written after the claim, where its own fence check sees the newer segment and refuses to acknowledge it.
 */
import path from "node:path";
import { promises as fsp } from "node:fs";
import { workflowError } from "@phasekit/core";
import { nodeFs, type FsFileHandle } from "../../io/fs-port.js";
import { isAlreadyExists, openRegular, syncRealDir } from "../../io/safe-open.js";
import { datasyncRegularSync } from "../../io/safe-open-sync.js";
import { encodeLine, RUN_LOG_DIR, RUN_LOG_VERSION, type HeadRecord } from "./format.js";
import { MAX_EPOCH, segmentEpoch, segmentName } from "./file-names.js";
import { importLegacy } from "./legacy.js";
import { loadSnapshot, type LoadedChain } from "./read-chain.js";
import { loadChainSettled } from "./reader.js";

import type { ClaimFacts } from "./log-parts.js";
import { SegmentWriter, type FsBoundary } from "./segment-writer.js";
import type { ValueFiles } from "./values.js";

/** A claimed run: the holder's writer, and the history it accepted. */
export interface Claim {
  dir: string;
  epoch: number;
  writer: SegmentWriter;
  chain: LoadedChain;
  head: HeadRecord;
  facts: ClaimFacts;
}

const CLAIM_ATTEMPTS = 8;

/**
 * Claims the next epoch of the run log in `runDir` (creating the folder on first use); `values` reads its
 * snapshot. With `only`, that epoch or none: LOCK_LOST when another claim took it or a higher one (a holder that
 * folds its history at close continues in the very next epoch, and must never fence off a claim made meanwhile).
 */
export async function claimRunLog(runDir: string, boundary: FsBoundary, values: ValueFiles, only?: number): Promise<Claim> {
  const dir = path.join(runDir, RUN_LOG_DIR);
  boundary("mkdir(runlog)");
  const made = await fsp.mkdir(dir, { mode: 0o700 }).then(
    () => true,
    (error: unknown) => {
      if ((error as { code?: unknown }).code === "EEXIST") return false;
      throw error;
    },
  );
  const st = await fsp.lstat(dir);
  if (!st.isDirectory()) {
    throw workflowError("run-log", "UNSAFE_FILE", `${dir} is not a folder; the run log needs it to be one.`, { file: dir, hint: "remove what was planted there" });
  }
  if (made) {
    boundary("fsync(run folder)");
    await syncRealDir(nodeFs, runDir, "run-log");
  }
  for (let attempt = 0; attempt < CLAIM_ATTEMPTS; attempt++) {
    boundary("readdir(claim)");
    const names = await fsp.readdir(dir);
    const max = names.reduce((m, n) => Math.max(m, segmentEpoch(n) ?? 0), 0);
    if (max >= MAX_EPOCH) throw epochsExhausted(path.join(dir, segmentName(max)), max);
    const epoch = max + 1;
    if (only !== undefined && epoch !== only) throw claimedMeanwhile(dir, only, max);
    const file = path.join(dir, segmentName(epoch));
    let handle: FsFileHandle;
    try {
      boundary("open(claim)");
      handle = ((await openRegular(nodeFs, file, "create-segment", "run-log")) as { handle: FsFileHandle }).handle;
    } catch (error) {
      if (isAlreadyExists(error)) {
        if (only !== undefined) throw claimedMeanwhile(dir, only, only);
        continue;
      }
      throw error;
    }
    try {
      return await pinHistory(dir, epoch, file, handle, boundary, values);
    } catch (error) {
      await handle.close().catch(() => undefined);
      throw error;
    }
  }
  throw workflowError("run-log", "LOCKED", `${dir}: ${CLAIM_ATTEMPTS} claims in a row were taken by other runners.`, {
    file: dir,
    hint: "another runner is starting this run; wait for it",
  });
}

function claimedMeanwhile(dir: string, wanted: number, found: number): Error {
  return workflowError("run-log", "LOCK_LOST", `${dir}: epoch ${wanted} was to continue this history, but epoch ${found} was claimed meanwhile.`, {
    file: dir,
    value: found,
    hint: "another runner took the run over; let it finish, or resume after it stops",
  });
}

/**
 * The highest segment name leaves no epoch to claim. It cannot be ignored, even when it is empty (a void claim):
 * the fence argument (docs/decisions.md, D14) needs every claim to take an epoch above every segment that
 * exists, and an empty segment may be a live claimant's that has not written its head yet; claiming below it
 * would fence ourselves off, and deleting it could break that claimant. Epochs are counted one by one from 1,
 * so no runner reaches this number: the file was planted or damaged, and a person must move it.
 */
function epochsExhausted(file: string, epoch: number): Error {
  return workflowError("run-log", "CORRUPT_FILE", `${file} claims epoch ${epoch}, the last a segment name can hold: no runner can claim this run after it.`, {
    file,
    value: epoch,
    hint: `phasekit counts epochs from 1 and never reached this one: move ${file} out of the run folder (readers ignore it if it is empty), then retry`,
  });
}

async function pinHistory(dir: string, epoch: number, file: string, handle: FsFileHandle, boundary: FsBoundary, values: ValueFiles): Promise<Claim> {
  // Read only now, after the claim exists: see the module comment.
  boundary("read(history)");
  // Settled: a displaced holder that wrote nothing may delete its own segment under us (reader.ts).
  const chain = await loadChainSettled(dir, values);
  // What we accept must survive a power cut before anything we acknowledge can depend on it (a reuse hit of
  // the previous holder's last, unsynced record): sync the previous head once. Our own head is synced with
  // our first durable record.
  if (chain.headEpoch > 0) syncFile(path.join(dir, segmentName(chain.headEpoch)), boundary);
  // A run with no run-log history may be one written in the earlier format: carry its checkpoints over.
  const legacy = chain.headEpoch === 0 ? await importLegacy(path.dirname(dir), dir, epoch, boundary) : null;
  if (legacy !== null) chain.index = await loadSnapshot(dir, legacy, values);
  const base = legacy ?? chain.accepted.base;
  const head: HeadRecord = { t: "head", v: RUN_LOG_VERSION, e: epoch, base, pins: chain.accepted.pins.filter(([, from, to]) => to > from) };
  const writer = new SegmentWriter(handle, file, dir, epoch, 0, boundary);
  await writer.append(encodeLine(head), false);
  const facts: ClaimFacts = { headBytes: writer.size, segmentsBefore: chain.segments.filter((e) => e !== epoch).length, imported: legacy !== null };
  return { dir, epoch, writer, chain, head, facts };
}

function syncFile(file: string, boundary: FsBoundary): void {
  boundary("fdatasync(previous head)");
  datasyncRegularSync(file, "run-log");
}
