#!/usr/bin/env bash
# Installs Debian's Chromium for the dashboard's browser test
# (test/dashboard), unless a Chromium is already on PATH.
set -euo pipefail
for b in chromium chromium-browser google-chrome; do
  if command -v "$b" >/dev/null 2>&1; then
    echo "browser: $("$b" --version 2>/dev/null || echo "$b")"
    exit 0
  fi
done
sudo=""
if [[ "$(id -u)" != 0 ]]; then
  sudo="sudo -n"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends chromium >/dev/null
echo "browser: $(chromium --version)"
