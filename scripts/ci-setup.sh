#!/usr/bin/env bash
# Install the system packages the tests need (Debian). Idempotent; skips what is already there.
set -euo pipefail
need=()
command -v gcc >/dev/null || need+=(gcc)
# nauty-Traces-sys runs bindgen, which needs libclang.
dpkg -s libclang-dev >/dev/null 2>&1 || need+=(libclang-dev)
# The deploy test (tests/tests/deploy.rs): hosts as network namespaces, each with its own sshd,
# reached with ssh/scp; systemd-analyze checks the unit files.
[ -x /usr/sbin/sshd ] || need+=(openssh-server)
command -v ssh >/dev/null || need+=(openssh-client)
command -v ip >/dev/null || need+=(iproute2)
command -v systemd-analyze >/dev/null || need+=(systemd)
# The explorer page is tested in a real headless Chromium, driven through chromedriver.
command -v chromium >/dev/null || need+=(chromium)
command -v chromedriver >/dev/null || need+=(chromium-driver)
if [ ${#need[@]} -gt 0 ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}"
fi
