/**
 * Builds every package (tsc -b, incremental) before the tests, so that integration tests can spawn plain
 * `node` children that import `packages/<pkg>/dist/…` (a tsx child costs ~3× the start-up time, and crash
 * tests start hundreds of children). Type errors are reported but do not stop the run: `pnpm typecheck` is
 * the gate for those.
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

export default function setup(): void {
  const root = fileURLToPath(new URL("..", import.meta.url));
  const tsc = fileURLToPath(new URL("../node_modules/typescript/bin/tsc", import.meta.url));
  const r = spawnSync(process.execPath, [tsc, "-b"], { cwd: root, encoding: "utf8" });
  if (r.status !== 0) process.stderr.write(`[global-setup] tsc -b reported errors (tests still run):\n${r.stdout}${r.stderr}\n`);
}
