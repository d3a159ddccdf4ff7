// The workspace's vitest config with `zod` pointed at another copy (PHASEKIT_ZOD_DIR): used by .ci/zod-range.sh to
// run the tests against both ends of the zod peer range.
import { defineConfig, mergeConfig } from "vitest/config";
import base from "../vitest.config.js";

const zod = process.env["PHASEKIT_ZOD_DIR"];
if (zod === undefined) throw new Error("PHASEKIT_ZOD_DIR must name the zod folder to test against");

export default mergeConfig(base, defineConfig({ resolve: { alias: [{ find: /^zod$/, replacement: `${zod}/index.js` }] } }));
