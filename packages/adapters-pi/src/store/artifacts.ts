/**
 * Content-addressed artifacts: a value is stored as `artifacts/<sha256>.json`, whose bytes are exactly the
 * canonical encoding its fingerprint hashes. Two step ids can therefore never share a file by accident, equal
 * outputs share one file safely, and every read is verified against its name (a flipped byte is "corrupt").
 */
import path from "node:path";
import { workflowError, type WorkflowError } from "@phasekit/core";
import { writeFileAtomic } from "../io/atomic-write.js";
import { fingerprintDigest, fingerprintOfCanonical, FINGERPRINT_PREFIX, type Fingerprint } from "./fingerprint.js";
import { fsErrorCode, nodeFs, type FsPort } from "../io/fs-port.js";
import type { JsonValue } from "../io/plain-json.js";
import { encodeCanonical } from "../io/canonical-json.js";
import { DIR_MODE } from "../io/plan-paths.js";

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
    let bytes: Buffer;
    try {
      bytes = await fs.readFile(file);
    } catch (error) {
      if (fsErrorCode(error) === "ENOENT") {
        return { ok: false, reason: "missing", error: workflowError(SCOPE, "NOT_FOUND", `artifact ${file} is missing.`, { file, value: fp, hint: "the step will run again and rewrite it" }) };
      }
      return { ok: false, reason: "missing", error: workflowError(SCOPE, "READ_FAILED", `cannot read artifact ${file}: ${String(error)}`, { file, value: fp }, error) };
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
      try {
        await fs.mkdir(dir, { recursive: true, mode: DIR_MODE });
      } catch (error) {
        throw workflowError(SCOPE, "WRITE_FAILED", `cannot create ${dir}: ${String(error)}`, { file: dir, hint: "check the run folder's permissions" }, error);
      }
      await writeFileAtomic(fileOf(fp), text, { fs });
    }
    return { fingerprint: fp, ref: artifactRefOf(fp) };
  }

  const put = (value: unknown): Promise<ArtifactRef> => putEncoded(encodeArtifact(value));

  async function list(): Promise<Fingerprint[]> {
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
    try {
      await fs.unlink(fileOf(fp));
    } catch (error) {
      if (fsErrorCode(error) !== "ENOENT") {
        throw workflowError(SCOPE, "WRITE_FAILED", `cannot remove artifact ${fileOf(fp)}: ${String(error)}`, { file: fileOf(fp) }, error);
      }
    }
  }

  return { dir, put, putEncoded, get, list, remove };
}

function corrupt(file: string, fp: Fingerprint, why: string): WorkflowError {
  return workflowError(SCOPE, "CORRUPT_FILE", `artifact ${file} is corrupt: ${why}.`, {
    file,
    value: fp,
    hint: "the step will run again and rewrite it; keep a copy if you need to inspect it",
  });
}
