/**
 * io/open-name.ts against a mount: a folder bind-mounted over the run log's folder, the run folder or the plan
 * root hides the segment the holder writes, though the fd's link in /proc still names the same path. The
 * holder's check must still see that its segment's name no longer leads to its file (as its stat did): records
 * written to a file no reader finds are never acknowledged, and no body starts. Run in a user and mount
 * namespace of its own (`unshare -rm`); skipped where the system allows none.
 */
import { describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const CHILD = fileURLToPath(new URL("./helpers/runlog-overmount.mjs", import.meta.url));
const namespaces = process.platform === "linux" && spawnSync("unshare", ["-rm", "true"]).status === 0;

describe.runIf(namespaces)("the holder's name check under a mount over its folders", () => {
  for (const target of ["plans/run/runlog", "plans/run", "plans"]) {
    it(`a folder mounted over ${target}: step b is refused with UNSAFE_FILE before its body`, () => {
      const root = mkdtempSync(path.join(tmpdir(), "phasekit-overmount-"));
      const r = spawnSync("unshare", ["-rm", process.execPath, CHILD, root, target], { encoding: "utf8" });
      expect(r.stdout.trim().split("\n"), r.stderr).toEqual(["error UNSAFE_FILE", "ran false"]);
    });
  }
});
