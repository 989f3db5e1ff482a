#!/usr/bin/env bash
# Installs the Debian 12 packages mpior needs to build, test and run.
# Idempotent: quiet when everything is there.
set -euo pipefail

packages=(
  g++ gfortran pkg-config python3 meson ninja-build
  mpich libmpich-dev libunwind-dev libspdlog-dev libfmt-dev libzstd-dev
  catch2 libcli11-dev nlohmann-json3-dev
  libaio-dev   # Linux native AIO: the tracer's libaio wrappers, its test program
  libhdf5-mpich-dev strace clang-format
  help2man   # man pages from --help (meson install)
  chromium   # the HTML report's test opens it headless
  openmpi-bin libopenmpi-dev   # the Open MPI tracer (libmpior-openmpi.so)
  libhdf5-openmpi-dev          # parallel HDF5 under Open MPI (strace_test.py)
  lammps lammps-examples       # a real application traced under Open MPI
  fio                          # mpior-predict's benchmark jobs
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "setup: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
  sudo=sudo
fi
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq "${missing[@]}" >/dev/null
