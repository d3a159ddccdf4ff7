#!/usr/bin/env bash
# Installs Debian's chromium for the inspector's browser test (playwright-core drives it; no browser download).
# Emoji fonts make the screenshots readable. Never fails CI by itself: without chromium the browser test is
# skipped with a loud reason in the test output.
set -uo pipefail
if command -v chromium >/dev/null 2>&1; then
  echo "chromium: $(chromium --version 2>/dev/null || echo present)"
  exit 0
fi
SUDO=""
if [ "$(id -u)" != "0" ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else echo "!!! setup-chromium: not root and no sudo: the inspector browser test will be skipped"; exit 0; fi
fi
if $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium fonts-noto-color-emoji >/dev/null; then
  echo "chromium: $(chromium --version 2>/dev/null)"
else
  echo "!!! setup-chromium: apt-get could not install chromium: the inspector browser test will be skipped"
fi
exit 0
