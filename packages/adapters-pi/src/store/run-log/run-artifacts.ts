/**
 * Outputs too large to sit in a log line: content-addressed files `artifacts/<sha256>-<epoch>.json`, written
 * and synced before the record that names them. The epoch in the name means a holder only ever creates files
 * no other epoch writes, and a compaction deletes only files of epochs up to its own.
 */
import path from "node:path";
import { promises as fsp } from "node:fs";
import { workflowError } from "@phasekit/core";
import { FINGERPRINT_PREFIX, fingerprintOfCanonical } from "../fingerprint.js";
import type { LogParts } from "./log-parts.js";
import { openRegular, readRegular, syncDir } from "./safe-file.js";
import { artifactId, artifactName, RUN_ARTIFACTS_DIR, type ValueRead } from "./values.js";

/** Reads and verifies the artifact `rel` (a path the log names; anything but `artifacts/<valid name>` is corrupt). */
export async function readArtifact(runDir: string, rel: string, fingerprint: string): Promise<ValueRead> {
  if (path.dirname(rel) !== RUN_ARTIFACTS_DIR || artifactId(path.basename(rel)) === undefined) {
    return { ok: false, reason: "corrupt", detail: `the log names ${JSON.stringify(rel)}, not an artifact path` };
  }
  let bytes: Buffer;
  try {
    bytes = await readRegular(path.join(runDir, rel));
  } catch (error) {
    const missing = (error as { code?: unknown }).code === "ENOENT";
    return { ok: false, reason: missing ? "missing" : "corrupt", detail: String(error) };
  }
  if (fingerprintOfCanonical(bytes) !== fingerprint) return { ok: false, reason: "corrupt", detail: `${rel} does not match ${fingerprint}` };
  return { ok: true, text: bytes.toString("utf8") };
}

/** Stores `text` (whose fingerprint is `fingerprint`) as this epoch's artifact and returns its relative path. */
export async function writeArtifact(parts: LogParts, text: string, fingerprint: string): Promise<string> {
  const rel = artifactName(fingerprint.slice(FINGERPRINT_PREFIX.length), parts.epoch);
  const file = path.join(parts.runDir, rel);
  const existing = await readArtifact(parts.runDir, rel, fingerprint);
  if (existing.ok) return rel;
  const dir = path.join(parts.runDir, RUN_ARTIFACTS_DIR);
  if (existing.reason === "missing") await ensureDir(parts, dir);
  // Only this epoch writes this name, so a bad file here is a torn write of our own, or something planted:
  // either way it is moved aside, never deleted.
  else await moveAside(parts, rel);
  parts.boundary("open(artifact)");
  const h = await openRegular(file, "create");
  try {
    const bytes = Buffer.from(text, "utf8");
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
  await syncDir(dir);
  return rel;
}

/**
 * Moves a damaged artifact (or whatever was planted under its name) to `<name>.tampered-<epoch>-<ms>`: compaction
 * deletes only names of the artifact pattern, so the evidence stays. Returns the new path (absolute).
 */
export async function moveAside(parts: LogParts, rel: string): Promise<string> {
  const from = path.join(parts.runDir, rel);
  const to = `${from}.tampered-${String(parts.epoch).padStart(10, "0")}-${Date.now()}`;
  parts.boundary("rename(aside)");
  await fsp.rename(from, to);
  return to;
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
  if (!(await fsp.lstat(dir)).isDirectory()) {
    throw workflowError("run-log", "UNSAFE_FILE", `${dir} is not a folder.`, { file: dir, hint: "remove what was planted there" });
  }
  if (made) {
    parts.boundary("fsync(run folder)");
    await syncDir(parts.runDir);
  }
}
