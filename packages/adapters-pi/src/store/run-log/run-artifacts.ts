/**
 * Outputs too large to sit in a log line: content-addressed files `artifacts/<sha256>-<epoch>.json`, written
 * and synced before the record that names them. The epoch in the name means a holder only ever creates files
 * no other epoch writes, and a compaction deletes only files of epochs up to its own. Every open goes through
 * io/safe-open.ts; `artifacts/` must be a real folder (a symlink there is UNSAFE_FILE), and a rename happens
 * through the folder's descriptor, so a folder swapped meanwhile is never renamed from.
 */
import path from "node:path";
import { promises as fsp } from "node:fs";
import { workflowError } from "@phasekit/core";
import { nodeFs, type FsFileHandle } from "../../io/fs-port.js";
import { assertRealDir, MAX_FILE_BYTES, openRegular, readRegular, syncRealDir } from "../../io/safe-open.js";
import { RealDir } from "../../io/safe-open-sync.js";
import { FINGERPRINT_PREFIX, fingerprintOfCanonical } from "../../engine/fingerprint.js";
import type { LogParts } from "./log-parts.js";
import { artifactName, isArtifactPath, RUN_ARTIFACTS_DIR } from "./file-names.js";
import type { ValueRead } from "./values.js";

const SCOPE = "run-log";

/**
 * Reads and verifies the artifact `rel` (a path the log names; decoding already refused anything but
 * `artifacts/<valid name>`). UNSAFE_FILE when `artifacts/` is not a real folder: that is not the artifact's fault.
 */
export async function readArtifact(runDir: string, rel: string, fingerprint: string): Promise<ValueRead> {
  if (!isArtifactPath(rel)) return { ok: false, reason: "corrupt", detail: `the log names ${JSON.stringify(rel)}, not an artifact path` };
  if (!(await assertRealDir(nodeFs, path.join(runDir, RUN_ARTIFACTS_DIR), SCOPE))) return { ok: false, reason: "missing", detail: `${path.join(runDir, RUN_ARTIFACTS_DIR)} does not exist` };
  let bytes: Buffer | null;
  try {
    bytes = await readRegular(nodeFs, path.join(runDir, rel), { maxBytes: MAX_FILE_BYTES.artifact, scope: SCOPE });
  } catch (error) {
    return { ok: false, reason: "corrupt", detail: String(error) };
  }
  if (bytes === null) return { ok: false, reason: "missing", detail: `${path.join(runDir, rel)} does not exist` };
  if (fingerprintOfCanonical(bytes) !== fingerprint) return { ok: false, reason: "corrupt", detail: `${rel} does not match ${fingerprint}` };
  return { ok: true, text: bytes.toString("utf8") };
}

/** Stores `text` (whose fingerprint is `fingerprint`) as this epoch's artifact and returns its relative path. */
export async function writeArtifact(parts: LogParts, text: string, fingerprint: string): Promise<string> {
  const rel = artifactName(fingerprint.slice(FINGERPRINT_PREFIX.length), parts.epoch);
  const file = path.join(parts.runDir, rel);
  const bytes = Buffer.from(text, "utf8");
  // Readers refuse an artifact above the cap; so it is never written.
  if (bytes.length > MAX_FILE_BYTES.artifact) {
    throw workflowError(SCOPE, "FILE_TOO_LARGE", `the output of ${bytes.length} bytes is above the cap of ${MAX_FILE_BYTES.artifact} bytes for ${file}; nothing was written.`, {
      file,
      value: bytes.length,
      max: MAX_FILE_BYTES.artifact,
      hint: "return a smaller output (store large data in a file of your own and return its path)",
    });
  }
  const existing = await readArtifact(parts.runDir, rel, fingerprint);
  if (existing.ok) return rel;
  const dir = path.join(parts.runDir, RUN_ARTIFACTS_DIR);
  if (existing.reason === "missing") await ensureDir(parts, dir);
  // Only this epoch writes this name, so a bad file here is a torn write of our own, or something planted:
  // either way it is moved aside, never deleted.
  else await moveAside(parts, rel);
  parts.boundary("open(artifact)");
  const { handle: h } = (await openRegular(nodeFs, file, "create", SCOPE)) as { handle: FsFileHandle };
  try {
    let done = 0;
    while (done < bytes.length) {
      parts.boundary("write(artifact)");
      done += (await h.write(bytes, done, bytes.length - done, null)).bytesWritten;
    }
    parts.boundary("fdatasync(artifact)");
    await h.datasync();
  } finally {
    await h.close();
  }
  parts.boundary("fsync(artifacts)");
  await syncRealDir(nodeFs, dir, SCOPE);
  return rel;
}

/**
 * Moves a damaged artifact (or whatever was planted under its name) to `<name>.tampered-<epoch>-<ms>`: compaction
 * deletes only names of the artifact pattern, so the evidence stays. Returns the new path (absolute).
 */
export async function moveAside(parts: LogParts, rel: string): Promise<string> {
  if (!isArtifactPath(rel)) throw workflowError(SCOPE, "CORRUPT_FILE", `the run log names ${JSON.stringify(rel)}, not a file of ${RUN_ARTIFACTS_DIR}/; nothing was moved.`, { file: parts.dir, value: rel, hint: "restore the run log from a backup or move the run folder aside" });
  const name = path.basename(rel);
  const aside = `${name}.tampered-${String(parts.epoch).padStart(10, "0")}-${Date.now()}`;
  const dirPath = path.join(parts.runDir, RUN_ARTIFACTS_DIR);
  const dir = RealDir.open(dirPath, SCOPE);
  if (dir === null) throw workflowError(SCOPE, "READ_FAILED", `${dirPath} is gone; ${name} cannot be moved aside.`, { file: dirPath });
  try {
    parts.boundary("rename(aside)");
    dir.rename(name, aside);
  } finally {
    dir.close();
  }
  return path.join(dirPath, aside);
}

async function ensureDir(parts: LogParts, dir: string): Promise<void> {
  parts.boundary("mkdir(artifacts)");
  const made = await fsp.mkdir(dir, { mode: 0o700 }).then(
    () => true,
    (error: unknown) => {
      if ((error as { code?: unknown }).code === "EEXIST") return false;
      throw error;
    },
  );
  await assertRealDir(nodeFs, dir, SCOPE);
  if (made) {
    parts.boundary("fsync(run folder)");
    await syncRealDir(nodeFs, parts.runDir, SCOPE);
  }
}
