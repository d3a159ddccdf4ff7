/**
 * Importing @phasekit/adapters-pi (and taking a lock) keeps the signal dispositions the process inherited:
 * proper-lockfile's signal-exit used to install a SIGXFSZ handler, so a process started with SIGXFSZ ignored was
 * killed by SIGXFSZ at `ulimit -f` instead of getting EFBIG.
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const child = fileURLToPath(new URL("./helpers/xfsz-child.mjs", import.meta.url));

function run(mode: string) {
  const script = `trap "" XFSZ; ulimit -f 64; exec "${process.execPath}" "${child}" ${mode}`;
  return spawnSync("sh", ["-c", script], { encoding: "utf8", timeout: 30_000 });
}

describe("signal dispositions", () => {
  for (const mode of ["import", "lock", "held"]) {
    it(`SIGXFSZ ignored by the parent stays ignored (${mode}): the write gets EFBIG`, () => {
      const r = run(mode);
      expect(r.signal, r.stderr).toBeNull();
      expect(r.stdout.trim(), r.stderr).toBe("EFBIG");
    });
  }
});
