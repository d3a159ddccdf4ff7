import { defineConfig } from "vitest/config";

// Tests run from source through the custom "@phasekit/source" export condition: no build step needed.
export default defineConfig({
  resolve: { conditions: ["@phasekit/source"] },
  ssr: { resolve: { conditions: ["@phasekit/source"] } },
  test: {
    include: ["packages/*/test/**/*.test.ts", "test/**/*.test.ts"],
    globalSetup: ["test/global-setup.ts"],
    pool: "forks",
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
