import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

// Tests run from source through the custom "@phasekit/source" export condition: no build step needed.
export default defineConfig({
  resolve: { conditions: ["@phasekit/source"] },
  ssr: { resolve: { conditions: ["@phasekit/source"] } },
  test: {
    include: ["packages/*/test/**/*.test.ts", "test/**/*.test.ts"],
    globalSetup: ["test/global-setup.ts"],
    pool: "forks",
    // Vitest's default is one worker per core but one: on CI's 2 cores, a single worker, and the suite took 15 min.
    // Most of its time is spent waiting on child processes, locks and a database, so two workers overlap that.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
