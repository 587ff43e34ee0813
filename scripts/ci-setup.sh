#!/usr/bin/env bash
# Install the system packages the tests need (Debian). Idempotent; skips what is already there.
set -euo pipefail
need=()
command -v gcc >/dev/null || need+=(gcc)
# nauty-Traces-sys runs bindgen, which needs libclang.
dpkg -s libclang-dev >/dev/null 2>&1 || need+=(libclang-dev)
# The explorer page is tested in a real headless Chromium, driven through chromedriver.
command -v chromium >/dev/null || need+=(chromium)
command -v chromedriver >/dev/null || need+=(chromium-driver)
if [ ${#need[@]} -gt 0 ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}"
fi
