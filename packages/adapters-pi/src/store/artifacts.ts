/**
 * Content-addressed artifacts: a value is stored as `artifacts/<sha256>.json`, whose bytes are exactly the
 * canonical encoding its fingerprint hashes. Two step ids can therefore never share a file by accident, equal
 * outputs share one file safely, and every read is verified against its name (a flipped byte is "corrupt").
 */
import path from "node:path";
import { isWorkflowError, workflowError, type WorkflowError } from "@phasekit/core";
import { writeFileAtomic } from "../io/atomic-write.js";
import { fingerprintDigest, fingerprintOfCanonical, FINGERPRINT_PREFIX, type Fingerprint } from "./fingerprint.js";
import { fsErrorCode, nodeFs, type FsPort } from "../io/fs-port.js";
import type { JsonValue } from "../io/plain-json.js";
import { encodeCanonical } from "../io/canonical-json.js";
import { DIR_MODE } from "../io/plan-paths.js";
import { assertRealDir, MAX_FILE_BYTES, readRegular } from "../io/safe-open.js";

const SCOPE = "artifacts";
/** Folder of the artifacts inside a run folder. */
export const ARTIFACTS_DIR = "artifacts";
const ARTIFACT_NAME = /^([0-9a-f]{64})\.json$/;

/** Where a stored value lives: its fingerprint and its path relative to the run folder. */
export interface ArtifactRef {
  fingerprint: Fingerprint;
  /** `artifacts/<sha256>.json`, relative to the run folder. */
  ref: string;
}

/** Outcome of reading an artifact: the value, or why it cannot be used. */
export type ArtifactRead =
  | { ok: true; value: JsonValue }
  | { ok: false; reason: "missing" | "corrupt"; error: WorkflowError };

/** A value encoded for storage: its canonical bytes and their fingerprint. */
export interface EncodedArtifact {
  fingerprint: Fingerprint;
  text: string;
}

/** Validates (UNSERIALIZABLE unless plain JSON) and encodes a value, synchronously. */
export function encodeArtifact(value: unknown): EncodedArtifact {
  const text = encodeCanonical(value);
  return { fingerprint: fingerprintOfCanonical(text), text };
}

/** Content-addressed storage of plain-JSON values. */
export interface ArtifactStore {
  readonly dir: string;
  /** Stores `value` (plain JSON only, else UNSERIALIZABLE); an identical, intact file is reused. */
  put(value: unknown): Promise<ArtifactRef>;
  /** `put` for a value already encoded by `encodeArtifact`. */
  putEncoded(encoded: EncodedArtifact): Promise<ArtifactRef>;
  /** Reads and verifies the artifact of `fingerprint`. */
  get(fingerprint: Fingerprint): Promise<ArtifactRead>;
  /** Fingerprints of every artifact file present. */
  list(): Promise<Fingerprint[]>;
  /** Deletes an artifact; a missing one is fine. */
  remove(fingerprint: Fingerprint): Promise<void>;
  /** Damaged artifacts this store moved aside (kept as evidence) before rewriting them. */
  readonly movedAside: readonly MovedAside[];
}

/** A damaged artifact kept as evidence: where it was, where it is now, and why it was refused. */
export interface MovedAside {
  file: string;
  aside: string;
  why: string;
}

/** The artifact reference (`artifacts/<sha256>.json`) of a fingerprint. */
export function artifactRefOf(fingerprint: Fingerprint): string {
  return `${ARTIFACTS_DIR}/${fingerprintDigest(fingerprint)}.json`;
}

/** Creates the artifact store of a run folder (`<runDir>/artifacts`). */
export function createArtifactStore(options: { runDir: string; fs?: FsPort }): ArtifactStore {
  if (typeof options?.runDir !== "string" || options.runDir === "") {
    throw workflowError(SCOPE, "INVALID_OPTIONS", "createArtifactStore: runDir is required.", { field: "runDir", value: options?.runDir });
  }
  const fs = options.fs ?? nodeFs;
  const dir = path.join(path.resolve(options.runDir), ARTIFACTS_DIR);
  const fileOf = (fp: Fingerprint) => path.join(dir, `${fingerprintDigest(fp)}.json`);

  async function get(fp: Fingerprint): Promise<ArtifactRead> {
    const file = fileOf(fp);
    let bytes: Buffer | null;
    try {
      await assertRealDir(fs, dir, SCOPE);
      bytes = await readRegular(fs, file, { maxBytes: MAX_FILE_BYTES.artifact, scope: SCOPE });
    } catch (error) {
      // A symlink, FIFO or oversized file is never read as the output, nor overwritten (see putEncoded).
      if (isWorkflowError(error) && (error.code === "UNSAFE_FILE" || error.code === "FILE_TOO_LARGE")) return { ok: false, reason: "corrupt", error };
      if (isWorkflowError(error)) return { ok: false, reason: "missing", error };
      return { ok: false, reason: "missing", error: workflowError(SCOPE, "READ_FAILED", `cannot read artifact ${file}: ${String(error)}`, { file, value: fp }, error) };
    }
    if (bytes === null) {
      return { ok: false, reason: "missing", error: workflowError(SCOPE, "NOT_FOUND", `artifact ${file} is missing.`, { file, value: fp, hint: "the step will run again and rewrite it" }) };
    }
    if (fingerprintOfCanonical(bytes) !== fp) {
      return { ok: false, reason: "corrupt", error: corrupt(file, fp, "its bytes do not match its fingerprint") };
    }
    try {
      return { ok: true, value: JSON.parse(bytes.toString("utf8")) as JsonValue };
    } catch (error) {
      return { ok: false, reason: "corrupt", error: corrupt(file, fp, `it is not JSON (${String(error)})`) };
    }
  }

  async function putEncoded({ fingerprint: fp, text }: EncodedArtifact): Promise<ArtifactRef> {
    const existing = await get(fp);
    if (!existing.ok) {
      if (!(await assertRealDir(fs, dir, SCOPE))) {
        try {
          await fs.mkdir(dir, { mode: DIR_MODE });
        } catch (error) {
          if (fsErrorCode(error) !== "EEXIST") throw workflowError(SCOPE, "WRITE_FAILED", `cannot create ${dir}: ${String(error)}`, { file: dir, hint: "check the run folder's permissions" }, error);
          await assertRealDir(fs, dir, SCOPE);
        }
      }
      // A tampered (or planted) file is evidence: it is moved aside, never overwritten, and the caller is told.
      if (existing.reason === "corrupt") await moveAside(fp, existing.error);
      await writeFileAtomic(fileOf(fp), text, { fs });
    }
    return { fingerprint: fp, ref: artifactRefOf(fp) };
  }

  const put = (value: unknown): Promise<ArtifactRef> => putEncoded(encodeArtifact(value));

  async function moveAside(fp: Fingerprint, why: WorkflowError): Promise<void> {
    const aside = `${fileOf(fp)}.tampered-${Date.now()}-${process.pid}`;
    try {
      await fs.rename(fileOf(fp), aside);
    } catch (error) {
      throw workflowError(SCOPE, "WRITE_FAILED", `cannot move the damaged artifact ${fileOf(fp)} aside: ${String(error)}`, { file: fileOf(fp) }, error);
    }
    movedAside.push({ file: fileOf(fp), aside, why: why.message });
  }

  async function list(): Promise<Fingerprint[]> {
    if (!(await assertRealDir(fs, dir, SCOPE))) return [];
    let names: string[];
    try {
      names = await fs.readdir(dir);
    } catch (error) {
      if (fsErrorCode(error) === "ENOENT") return [];
      throw workflowError(SCOPE, "READ_FAILED", `cannot list ${dir}: ${String(error)}`, { file: dir }, error);
    }
    const out: Fingerprint[] = [];
    for (const name of names) {
      const m = ARTIFACT_NAME.exec(name);
      if (m) out.push(`${FINGERPRINT_PREFIX}${m[1]}` as Fingerprint);
    }
    return out;
  }

  async function remove(fp: Fingerprint): Promise<void> {
    if (!(await assertRealDir(fs, dir, SCOPE))) return;
    try {
      await fs.unlink(fileOf(fp));
    } catch (error) {
      if (fsErrorCode(error) !== "ENOENT") {
        throw workflowError(SCOPE, "WRITE_FAILED", `cannot remove artifact ${fileOf(fp)}: ${String(error)}`, { file: fileOf(fp) }, error);
      }
    }
  }

  const movedAside: MovedAside[] = [];
  return { dir, put, putEncoded, get, list, remove, movedAside };
}

function corrupt(file: string, fp: Fingerprint, why: string): WorkflowError {
  return workflowError(SCOPE, "CORRUPT_FILE", `artifact ${file} is corrupt: ${why}.`, {
    file,
    value: fp,
    hint: "the step will run again and rewrite it; keep a copy if you need to inspect it",
  });
}
