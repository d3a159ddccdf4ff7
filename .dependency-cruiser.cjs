/**
 * The architecture as rules: no import cycles anywhere, core never touches node:* or the adapters, and inside
 * each package a folder imports only from the folders listed before it (its layer or below). `pnpm deps`
 * runs it; `pnpm test` runs it first, so a planted cycle or an upward import fails CI.
 */
const LAYERS = {
  core: ["errors", "definitions", "state", "transitions", "present", "policy", "api"],
  "adapters-pi": ["io", "lock", "engine", "store", "verification", "run", "definitions", "cli|pi", "testing|otel"],
  "store-postgres": ["db", "schema", "lease", "store"],
};

/** One rule per folder: it may not reach any folder that comes after it in its package's order. */
function layerRules() {
  const rules = [];
  for (const [pkg, layers] of Object.entries(LAYERS)) {
    layers.forEach((layer, i) => {
      const above = layers.slice(i + 1).join("|");
      if (!above) return;
      rules.push({
        name: `${pkg}-${layer.replace("|", "-")}-no-upward`,
        comment: `packages/${pkg}/src/${layer}/ may import only from folders below it (${layers.slice(0, i).join(", ") || "none"})`,
        severity: "error",
        from: { path: `^packages/${pkg}/src/(${layer})/` },
        to: { path: `^packages/${pkg}/src/(${above})/` },
      });
    });
  }
  // cli and pi sit side by side (testing, the kit for tests, above them): neither imports the other.
  rules.push({
    name: "adapters-pi-cli-pi-apart",
    severity: "error",
    from: { path: "^packages/adapters-pi/src/cli/" },
    to: { path: "^packages/adapters-pi/src/pi/" },
  });
  rules.push({
    name: "adapters-pi-pi-cli-apart",
    severity: "error",
    from: { path: "^packages/adapters-pi/src/pi/" },
    to: { path: "^packages/adapters-pi/src/cli/" },
  });
  return rules;
}

module.exports = {
  forbidden: [
    { name: "no-circular", severity: "error", comment: "an import cycle", from: {}, to: { circular: true } },
    {
      name: "core-is-pure",
      comment: "core imports only zod: no node:* builtins",
      severity: "error",
      from: { path: "^packages/core/src/" },
      to: { dependencyTypes: ["core"] },
    },
    {
      name: "core-no-adapters",
      severity: "error",
      from: { path: "^packages/core/src/" },
      to: { path: "^packages/(?!core/)" },
    },
    {
      name: "index-is-the-only-way-in",
      comment: "code outside a folder's package may not reach into its src (use the package's public exports: index.ts and the named subpath entries beside it)",
      severity: "error",
      from: { path: "^packages/([^/]+)/src/" },
      to: { path: "^packages/([^/]+)/src/", pathNot: ["^packages/$1/src/", "^packages/[^/]+/src/(index|store-kit|plan-folder)[.]ts$"] },
    },
    ...layerRules(),
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.base.json" },
    enhancedResolveOptions: { exportsFields: ["exports"], conditionNames: ["@phasekit/source", "import", "types"] },
  },
};
