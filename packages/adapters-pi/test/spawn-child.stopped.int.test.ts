/**
 * The SIGSTOP sweeps' children print `stopped …` and then stop themselves. The line arrives before the stop lands,
 * and a SIGCONT sent in between is lost (nothing is stopped yet), so the child then stays stopped and the test
 * waits for its next line for ever: one such sweep timed out in CI. `untilStopped` waits for the stop itself.
 */
import { describe, expect, it } from "vitest";
import { spawnLines, untilStopped } from "./helpers/spawn-child.js";

// Prints, works a while (a loaded machine), then stops itself; prints `end` once continued.
const CHILD = `process.stdout.write("stopped\\n"); const until = Date.now() + 300; while (Date.now() < until) {} process.kill(process.pid, "SIGSTOP"); process.stdout.write("end\\n");`;

describe("waiting for a child that stops itself", () => {
  it("resolves only once the child is stopped, so the SIGCONT after it wakes the child", async () => {
    const child = spawnLines(process.execPath, ["-e", CHILD]);
    await child.waitFor(/^stopped$/);
    await untilStopped(child.proc.pid as number);
    child.proc.kill("SIGCONT");
    expect(await child.waitFor(/^end$/)).toBe("end");
    expect((await child.exited).code).toBe(0);
  });

  it("says so when the process ends instead of stopping", async () => {
    const child = spawnLines(process.execPath, ["-e", "process.exit(0)"]);
    await child.exited;
    await expect(untilStopped(child.proc.pid as number)).rejects.toThrow(/ended before it stopped/);
  });
});
