#!/usr/bin/env bash
# Installs what the pi 1.5.x end-to-end tests need, from the npm registry only: Node 22 (the `node` package) and
# pi 1.5.2's self-contained CLI bundle (npm pack + untar + jiti beside it; `npm i` of the package fails because
# some of its internal packages are not published), and pi-workflows 1.0.0 for the compatibility test. Idempotent; prints the directory it filled. ~30 s cold.
set -euo pipefail
cd "$(dirname "$0")/.."
DIR="${PHASEKIT_PI_HOSTS_DIR:-$PWD/node_modules/.cache/phasekit-pi-hosts}"
PI_VERSION=1.5.2
NODE_VERSION=22.23.3
mkdir -p "$DIR"
if [ ! -x "$DIR/node22/node_modules/.bin/node" ]; then
  npm i --no-save --no-audit --no-fund --prefix "$DIR/node22" "node@$NODE_VERSION" >/dev/null
fi
if [ ! -f "$DIR/pi-$PI_VERSION/package/dist/bundle/cli.js" ]; then
  rm -rf "$DIR/pi-$PI_VERSION.tmp" && mkdir -p "$DIR/pi-$PI_VERSION.tmp"
  (cd "$DIR/pi-$PI_VERSION.tmp" && npm pack --silent "@earendil-works/pi-coding-agent@$PI_VERSION" >/dev/null \
    && tar xzf earendil-works-pi-coding-agent-$PI_VERSION.tgz && rm -f ./*.tgz \
    && echo '{"private":true}' > package.json && npm i --no-save --no-audit --no-fund jiti@2.7.0 >/dev/null)
  rm -rf "$DIR/pi-$PI_VERSION" && mv "$DIR/pi-$PI_VERSION.tmp" "$DIR/pi-$PI_VERSION"
fi
# pi-workflows 1.0.0 as published (the compatibility test lets it write a session that phasekit then continues).
if [ ! -f "$DIR/pi-workflows-1.0.0/node_modules/yaml/package.json" ]; then
  rm -rf "$DIR/pi-workflows-1.0.0.tmp" && mkdir -p "$DIR/pi-workflows-1.0.0.tmp"
  (cd "$DIR/pi-workflows-1.0.0.tmp" && npm pack --silent "@harms-haus/pi-workflows@1.0.0" >/dev/null \
    && tar xzf harms-haus-pi-workflows-1.0.0.tgz && rm -f ./*.tgz \
    && echo '{"private":true}' > package.json && npm i --no-save --no-audit --no-fund yaml@2.8.2 >/dev/null)
  rm -rf "$DIR/pi-workflows-1.0.0" && mv "$DIR/pi-workflows-1.0.0.tmp" "$DIR/pi-workflows-1.0.0"
fi
# tmux: a test runs pi's interactive TUI under it and reads the screen (examples/pi/durable-job-extension.ts).
if ! command -v tmux >/dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" != "0" ] && SUDO="sudo"
  { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq tmux; } >&2
fi
"$DIR/node22/node_modules/.bin/node" "$DIR/pi-$PI_VERSION/package/dist/bundle/cli.js" --version >/dev/null
echo "$DIR"
