/**
 * The names of the files a run's history lives in: segments (`<epoch>.seg`), snapshots
 * (`snap-<epoch>-<n>.ndjson`) and artifacts (`artifacts/<sha256>-<epoch>.json`), and the one containment check of
 * artifact paths a history line names.
 */
const SEGMENT = /^(\d{10})\.seg$/;
const SNAPSHOT = /^snap-(\d{10})-(\d{6})\.ndjson$/;

/** The highest epoch a segment name holds (ten digits); claim.ts refuses to claim past it. */
export const MAX_EPOCH = 9_999_999_999;

/** File name of the segment of `epoch`. */
export function segmentName(epoch: number): string {
  return `${String(epoch).padStart(10, "0")}.seg`;
}

/** File name of the `n`th snapshot written by `epoch`. */
export function snapshotName(epoch: number, n: number): string {
  return `snap-${String(epoch).padStart(10, "0")}-${String(n).padStart(6, "0")}.ndjson`;
}

/** The epoch of a segment file name, or undefined for any other name. */
export function segmentEpoch(name: string): number | undefined {
  const m = SEGMENT.exec(name);
  return m ? Number(m[1]) : undefined;
}

/** The epoch and number of a snapshot file name, or undefined. */
export function snapshotId(name: string): { epoch: number; n: number } | undefined {
  const m = SNAPSHOT.exec(name);
  return m ? { epoch: Number(m[1]), n: Number(m[2]) } : undefined;
}

/** Artifacts folder inside the run folder. */
export const RUN_ARTIFACTS_DIR = "artifacts";

/** `artifacts/<sha256>-<epoch>.json`: the epoch in the name is what lets a compaction delete only its own. */
export function artifactName(digest: string, epoch: number): string {
  return `${RUN_ARTIFACTS_DIR}/${digest}-${String(epoch).padStart(10, "0")}.json`;
}

const ARTIFACT = /^([0-9a-f]{64})(?:-(\d{10}))?\.json$/;

/** The digest and epoch of an artifact file name (legacy `<sha256>.json` is epoch 0), or undefined. */
export function artifactId(name: string): { digest: string; epoch: number } | undefined {
  const m = ARTIFACT.exec(name);
  return m ? { digest: m[1] as string, epoch: m[2] === undefined ? 0 : Number(m[2]) } : undefined;
}

/**
 * True when `rel`, an artifact path a history line names, is exactly `artifacts/<artifact name>`: the one
 * containment check of names read from the log (header decoding calls it, so every reader and the holder get
 * CORRUPT_FILE naming the segment and line before anything is opened, renamed or deleted by that name).
 */
export function isArtifactPath(rel: string): boolean {
  const slash = rel.indexOf("/");
  return slash === RUN_ARTIFACTS_DIR.length && rel.startsWith(RUN_ARTIFACTS_DIR) && artifactId(rel.slice(slash + 1)) !== undefined;
}
