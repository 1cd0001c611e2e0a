#!/usr/bin/env bash
# Install what ridge needs to build (Debian packages). Safe to re-run: only missing packages are installed.
# With arguments, installs those packages instead (tools/setup_fuzz_deps.sh).
set -euo pipefail
if [ $# -gt 0 ]; then packages=("$@"); else packages=(build-essential cmake ninja-build ccache libfmt-dev nlohmann-json3-dev libcli11-dev libgtest-dev
          libbenchmark-dev libcpp-httplib-dev libssl-dev pkg-config python3 python3-pip libopenmpi-dev openmpi-bin
          libucx-dev libzmq3-dev libmsgpack-cxx-dev zlib1g-dev); fi
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}" >&2
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
fi
