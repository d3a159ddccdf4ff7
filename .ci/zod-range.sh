#!/usr/bin/env bash
# zod is a peer dependency of @phasekit/core and @phasekit/adapters-pi with the widest range the tests pass on.
# This checks both ends of that range: each version is installed in a temp consumer folder, then the packages'
# sources are type-checked and the zod-heavy tests run against it (vitest and tsc are pointed at that copy).
# Usage: .ci/zod-range.sh [version...]   (default: the oldest and the newest the range allows)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
versions=("$@")
if [ ${#versions[@]} -eq 0 ]; then
  range=$(node -p 'require("./packages/core/package.json").peerDependencies.zod')
  oldest=$(node -p "'$range'.replace(/^[~^>=]*/, '')")
  newest=$(npm view "zod@$range" version --json | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const v=JSON.parse(s);console.log(Array.isArray(v)?v[v.length-1]:v)})')
  versions=("$oldest" "$newest")
fi
for v in "${versions[@]}"; do
  dir=$(mktemp -d "${TMPDIR:-/tmp}/phasekit-zod-$v-XXXXXX")
  trap 'rm -rf "$dir"' EXIT
  echo "== zod $v in $dir"
  (cd "$dir" && echo '{"private":true}' > package.json && npm i --no-audit --no-fund --silent "zod@$v")
  cat > "$dir/tsconfig.json" <<JSON
{ "extends": "$ROOT/tsconfig.base.json",
  "compilerOptions": { "noEmit": true, "composite": false, "declaration": false, "declarationMap": false, "types": ["node"],
    "typeRoots": ["$ROOT/node_modules/@types"], "baseUrl": "/", "paths": { "zod": ["$dir/node_modules/zod/index.d.ts"] } },
  "include": ["$ROOT/packages/core/src", "$ROOT/packages/adapters-pi/src"] }
JSON
  npx tsc -p "$dir/tsconfig.json"
  PHASEKIT_ZOD_DIR="$dir/node_modules/zod" npx vitest run --config test/zod-range.vitest.config.ts \
    packages/core/test/compile-definitions.test.ts packages/core/test/migrate-state.test.ts \
    packages/core/test/hostile-input.test.ts packages/core/test/controls.test.ts packages/core/test/examples.test.ts \
    packages/adapters-pi/test/workflow-metadata.test.ts packages/adapters-pi/test/definitions-pi-examples.test.ts
  rm -rf "$dir"
  trap - EXIT
done
