#!/usr/bin/env bash
# Install the Debian packages Kingmaker needs. Idempotent: installs only what is missing.
#   scripts/setup.sh          what building needs (a C compiler; libclang for nauty's bindgen)
#   scripts/setup.sh --tests  and what the tests need (Chromium for the page test, sshd and
#                             iproute2 for the deploy test, systemd-analyze for the unit files,
#                             slurm-wlm and munge for the SLURM test)
set -euo pipefail
need=()
command -v gcc >/dev/null || need+=(gcc)
# nauty-Traces-sys runs bindgen, which needs libclang.
dpkg -s libclang-dev >/dev/null 2>&1 || need+=(libclang-dev)
if [ "${1:-}" = "--tests" ]; then
  # The deploy test (tests/tests/deploy.rs): hosts as network namespaces, each with its own sshd,
  # reached with ssh/scp; systemd-analyze checks the unit files.
  [ -x /usr/sbin/sshd ] || need+=(openssh-server)
  command -v ssh >/dev/null || need+=(openssh-client)
  command -v ip >/dev/null || need+=(iproute2)
  command -v systemd-analyze >/dev/null || need+=(systemd)
  # The SLURM test (tests/tests/slurm.rs): munged, slurmctld and a slurmd in each lab host, driven
  # with sbatch, srun, scontrol, scancel and squeue.
  { [ -x /usr/sbin/slurmctld ] && [ -x /usr/sbin/slurmd ] && command -v sbatch >/dev/null; } || need+=(slurm-wlm)
  [ -x /usr/sbin/munged ] || need+=(munge)
  # The explorer page is tested in a real headless Chromium, driven through chromedriver.
  command -v chromium >/dev/null || need+=(chromium)
  command -v chromedriver >/dev/null || need+=(chromium-driver)
fi
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "missing Debian packages: ${need[*]} — install them (as root: apt-get install ${need[*]}) and rerun" >&2
    exit 1
  fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}"
fi
