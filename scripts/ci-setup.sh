#!/usr/bin/env bash
# Install the system packages the tests need (Debian). Idempotent; skips what is already there.
set -euo pipefail
need=()
command -v gcc >/dev/null || need+=(gcc)
if [ ${#need[@]} -gt 0 ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}"
fi
