#!/usr/bin/env bash
# Installs the Debian 12 / Ubuntu packages kvbench needs to build, test and compare.
# Non-interactive and idempotent: installs only what is missing. Runs as root, or through sudo.
#   scripts/install-deps.sh                 # what the host's presets need
#   scripts/install-deps.sh --arm64-cross   # also the aarch64 cross compilers, qemu-user and the
#                                           # arm64 sysroot of the arm64-cross-* presets
#   scripts/install-deps.sh --arm64-root    # also qemu-user-static, binfmt-support, mmdebstrap,
#                                           # arch-test: what scripts/arm64-root.sh needs
#   scripts/install-deps.sh --slurm         # also Debian's Slurm (slurmctld, slurmd, slurm-client)
#                                           # and munge: what scripts/slurm-cluster.sh starts
#                                           # (docs/fleet.md), which runs daemons of its own,
#                                           # not the packages' system services
#   scripts/install-deps.sh --print-packages [--arch=arm64] [--build-only]
#                                           # the host packages for that Debian architecture, one
#                                           # a line, installing nothing (arm64-root.sh's list);
#                                           # --build-only: only what builds kvbench and runs its
#                                           # C++ and crash tests (arm64-root.sh --lean), not the
#                                           # tools of the kvb tests (PostgreSQL, matplotlib,
#                                           # Chromium, valgrind, strace, clang-tidy, pyflakes,
#                                           # db_bench)
set -euo pipefail
cd "$(dirname "$0")/.."

arm64_cross=0
arm64_root=0
slurm=0
print=0
build_only=0
arch=$(dpkg --print-architecture 2>/dev/null || uname -m)
for a in "$@"; do
  case "$a" in
    --arm64-cross) arm64_cross=1 ;;
    --arm64-root) arm64_root=1 ;;
    --slurm) slurm=1 ;;
    --print-packages) print=1 ;;
    --build-only) build_only=1 ;;
    --arch=*) arch=${a#--arch=} ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "install-deps: unknown argument $a" >&2; exit 2 ;;
  esac
done

packages=(
  build-essential cmake ninja-build pkg-config git python3
  clang libclang-rt-14-dev
  librocksdb-dev liblmdb-dev
  libxxhash-dev liblz4-dev libzstd-dev libsnappy-dev zlib1g-dev libbz2-dev libisal-dev
  libgtest-dev libgmock-dev libbenchmark-dev
)
tools=(
  ccache clang-format clang-tidy rocksdb-tools valgrind
  # scripts/lint.sh: pyflakes over the Python of scripts/ and tests/ (clang-tidy does the C++).
  python3-pyflakes
  # kvb bisect traces which files a library's build compiles (commits that change none skip).
  strace
  # The results store (docs/history.md): PostgreSQL for the store tests' throwaway cluster and
  # fleets, psycopg 3 to reach it. matplotlib draws the figures of kvb report --html, compare
  # --html, history --html and report.html (docs/report.md); Chromium renders the pages in
  # tests/report_test.py and tests/history_e2e.py.
  postgresql python3-psycopg python3-matplotlib chromium
)
[ "$build_only" = 1 ] || packages+=("${tools[@]}")
if [ "$arch" = amd64 ]; then
  packages+=(libwiredtiger-dev)
else
  echo "install-deps: Debian ships libwiredtiger-dev for amd64 only; building without WiredTiger on $arch" >&2
fi
if [ "$print" = 1 ]; then
  printf '%s\n' "${packages[@]}"
  exit 0
fi

if [ "$arm64_cross" = 1 ]; then
  # autotools: WiredTiger 3.x from source (Debian builds it for amd64 only).
  packages+=(gcc-aarch64-linux-gnu g++-aarch64-linux-gnu qemu-user autoconf automake libtool)
fi
if [ "$arm64_root" = 1 ]; then
  packages+=(qemu-user-static binfmt-support mmdebstrap arch-test)
fi
if [ "$slurm" = 1 ]; then
  packages+=(slurmctld slurmd slurm-client munge)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
# The arm64 libraries cannot be installed beside the amd64 ones (rocksdb and gflags are not
# Multi-Arch: same), so they go into a sysroot of their own.
arm64_sysroot() {
  [ "$arm64_cross" = 1 ] || return 0
  scripts/arm64-sysroot.sh >/dev/null
}
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  arm64_sysroot
  exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
  sudo=()
elif command -v sudo >/dev/null 2>&1; then
  sudo=(sudo)
else
  echo "install-deps: need root or sudo to install: ${missing[*]}" >&2
  exit 1
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -q
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
arm64_sysroot
