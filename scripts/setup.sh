#!/usr/bin/env bash
# Idempotent set-up for a fresh Debian 12 machine (run as root, or with sudo available):
# Debian packages, the pinned Python virtual environment in .venv, and the engine build.
# Re-running is cheap: each step is skipped when already done.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(
  build-essential cmake pkg-config git ca-certificates   # engine build
  python3 python3-venv python3-dev                        # the lab's Python environment
  stress-ng x264 libvips-tools hwloc                      # interferers and topology
  slurm-wlm munge                                         # gang scheduling setup
  linux-perf procps psmisc util-linux                     # perf counters, process tools
  gdb                                                     # a hung test run's thread stacks
)

need_apt=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need_apt+=("$p")
done
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "setup: installing Debian packages: ${need_apt[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
  # Debian starts munge/slurm services on install; the lab runs its own private ones.
  $SUDO systemctl disable --now slurmctld slurmd munge >/dev/null 2>&1 || true
fi

# Python: Debian's interpreter, so the venv does not depend on a user's pyenv or conda.
PY=/usr/bin/python3; [ -x "$PY" ] || PY=python3
if [ ! -x .venv/bin/python ] || ! cmp -s requirements.lock .venv/.requirements.lock; then
  echo "setup: creating the Python environment in .venv (pinned by requirements.lock)"
  "$PY" -m venv .venv
  .venv/bin/pip install -q --upgrade pip==24.3.1
  .venv/bin/pip install -q -r requirements.lock
  cp requirements.lock .venv/.requirements.lock
fi
.venv/bin/pip install -q --no-deps --no-build-isolation -e . >/dev/null

echo "setup: building the engine (engine/build)"
# Under CI a compiler warning is an error (engine/CMakeLists.txt, AIR_WERROR); stated every
# time, so a local set-up after a CI one turns it off again.
werror=OFF; [ "${CI:-}" = true ] && werror=ON
cmake -S engine -B engine/build -DCMAKE_BUILD_TYPE=Release -DAIR_WERROR="$werror" >/dev/null
cmake --build engine/build -j"$(nproc)" >/dev/null
echo "setup: done. Activate with: . .venv/bin/activate"
