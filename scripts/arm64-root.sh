#!/usr/bin/env bash
# Runs a command in this checkout inside an emulated arm64 Debian 12, as on an ARM server:
#
#   scripts/arm64-root.sh [--cpu CORE] -- COMMAND [ARG...]
#   scripts/arm64-root.sh -- sh -c 'cmake --preset arm-clang-native && ctest'
#   scripts/arm64-root.sh --create       # only make the root (when needed) and print its path
#   scripts/arm64-root.sh --list-cpus    # the cores --cpu accepts
#   scripts/arm64-root.sh --lean ...     # a root of its own with only what builds kvbench and
#                                        # runs its C++ and crash tests (install-deps.sh
#                                        # --build-only): made in about half the time; CI's
#                                        # part of the ARM command runs in it. The kvb tools'
#                                        # tests (PostgreSQL, matplotlib, Chromium, valgrind)
#                                        # need the full root.
#
# --cpu names a real core qemu emulates (default neoverse-n1). qemu (QEMU_CPU) and /proc/cpuinfo
# present the same core, so -mcpu=native resolves to it (clang: neoverse-n1 +crc +crypto; gcc:
# ares, its other name) and the code paths for its features are built and tested.
# The root is Debian bookworm arm64 (mmdebstrap --variant=apt, from the mirrors this machine's apt
# uses) with the arm64 build of every package scripts/install-deps.sh installs; WiredTiger is
# amd64-only in Debian, so ARM builds have rocksdb and lmdb. It is cached as
# ~/.cache/kvbench/arm64-root-<hash of its package list> (--lean: arm64-lean-root-<hash>): a
# changed list makes a new root and the old one of the same kind is removed. The first run makes it:
# 2.3 GB, 15 to 60 minutes on 2 cores as the load goes (measured: 27 min at load 12, 56 at load
# 5-8 with a slow mirror); --lean: 0.8 GB, about 20 minutes.
# Its binaries run through qemu-user-static, registered with binfmt_misc (mounted if need be).
# The checkout (and its git directory) is bind-mounted at its own path in a private mount
# namespace, so every mount goes away with the command however it exits; the command runs in the
# directory you called from (or the checkout's top), as the checkout's owner, so the build trees
# under build/ are the owner's. Inside, KVBENCH_EMULATED says what emulates the CPU, and the build
# records it. Needs root (sudo is used when not root).
# Exit status: the command's; 2 when the root or qemu cannot be set up (what to do is printed);
# 1 when mmdebstrap fails.
set -euo pipefail
self=$(readlink -f "$0")
checkout=$(cd "$(dirname "$self")/.." && pwd -P)
recipe_version=1  # bump when the way the root is made changes, to make a new one

# The cores qemu-aarch64 7.2 emulates, with the MIDR_EL1 qemu gives each (cpuinfo's implementer,
# variant, part and revision come from it, as the kernel's do).
declare -A midr=(
  [neoverse-n1]=0x414fd0c1 [cortex-a76]=0x414fd0b1 [cortex-a72]=0x410fd083
  [cortex-a57]=0x411fd070 [cortex-a53]=0x410fd034 [cortex-a35]=0x411fd040 [a64fx]=0x461f0010
)

refuse() {
  echo "arm64-root: $*" >&2
  exit 2
}
usage() {
  sed -n '2,13p' "$self" | sed 's/^# \{0,1\}//'
  exit "${1:-2}"
}

# --- inside the private mount namespace (run by unshare below) --------------------------------
# Mounts what the root needs, presents the CPU, and runs the command as the checkout's owner.
in_namespace() {
  local root=$1 run=$2 owner=$3 cwd=$4 gitdir=$5 cpu=$6
  shift 7  # the sixth argument is followed by --
  mount -t proc proc "$root/proc"
  mount --bind "$run/cpuinfo" "$root/proc/cpuinfo"
  mount --rbind /dev "$root/dev"
  mount --rbind /sys "$root/sys"
  mount --bind "$run/tmp" "$root/tmp"
  local d
  for d in "$checkout" "$gitdir"; do
    [ -n "$d" ] || continue
    mkdir -p "$root$d"
    mount --bind "$d" "$root$d"
  done
  local env=(PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/tmp
             LANG=C.UTF-8 QEMU_CPU="$cpu"
             KVBENCH_EMULATED="qemu-aarch64 user mode -cpu $cpu on $(uname -m)")
  local v
  for v in TERM CI CMAKE_BUILD_PARALLEL_LEVEL CTEST_PARALLEL_LEVEL CTEST_OUTPUT_ON_FAILURE \
           $(compgen -e | grep '^KVBENCH_' || true); do
    [ -z "${!v+x}" ] || [ "$v" = KVBENCH_EMULATED ] || env+=("$v=${!v}")
  done
  # chroot execs the root's arm64 env: qemu takes the CPU from QEMU_CPU for that exec too.
  export QEMU_CPU=$cpu
  exec chroot --userspec="$owner" "$root" /usr/bin/env -i "${env[@]}" \
    /bin/sh -c 'cd "$1" && shift && exec "$@"' arm64-root "$cwd" "$@"
}
if [ "${1:-}" = --in-namespace ]; then
  shift
  in_namespace "$@"
fi

# --- arguments ---------------------------------------------------------------------------------
cpu=neoverse-n1
mode=run
lean=
cmd=()
while [ $# -gt 0 ]; do
  case "$1" in
    --cpu) [ $# -ge 2 ] || refuse "--cpu needs a core: --list-cpus shows them"; cpu=$2; shift 2 ;;
    --cpu=*) cpu=${1#--cpu=}; shift ;;
    --create) mode=create; shift ;;
    --lean) lean=--build-only; shift ;;
    --list-cpus) printf '%s\n' "${!midr[@]}" | sort; exit 0 ;;
    -h|--help) usage 0 ;;
    --) shift; cmd=("$@"); break ;;
    *) refuse "unknown argument $1 (the command goes after --; --help)" ;;
  esac
done
[ -n "${midr[$cpu]:-}" ] ||
  refuse "--cpu $cpu: not a core this script presents; one of: $(printf '%s ' "${!midr[@]}")"
[ "$mode" = create ] || [ ${#cmd[@]} -gt 0 ] ||
  refuse "no command: arm64-root.sh -- COMMAND (--help)"

if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null 2>&1 ||
    refuse "needs root (mmdebstrap, mount, chroot) and sudo is not installed: run it as root"
  args=(--cpu "$cpu")
  [ "$mode" = run ] || args+=(--create)
  [ -z "$lean" ] || args+=(--lean)
  exec sudo -- "$self" "${args[@]}" ${cmd[@]+--} "${cmd[@]}"
fi

# --- qemu-user through binfmt_misc -------------------------------------------------------------
tools_present() {
  command -v mmdebstrap >/dev/null && command -v update-binfmts >/dev/null &&
    command -v arch-test >/dev/null &&
    [ -x /usr/bin/qemu-aarch64-static ]
}
if ! tools_present; then
  [ "${KVBENCH_SKIP_DEPS:-0}" != 1 ] && "$checkout/scripts/install-deps.sh" --arm64-root >&2 ||
    refuse "needs qemu-user-static, binfmt-support, mmdebstrap and arch-test:" \
           "scripts/install-deps.sh --arm64-root"
fi
binfmt=/proc/sys/fs/binfmt_misc
if [ ! -e "$binfmt/register" ]; then
  mount -t binfmt_misc binfmt_misc "$binfmt" 2>/dev/null ||
    refuse "cannot mount binfmt_misc on $binfmt (a container without it?): run this on the host," \
           "or mount it there: mount -t binfmt_misc binfmt_misc $binfmt"
fi
if [ ! -e "$binfmt/qemu-aarch64" ]; then
  update-binfmts --import qemu-aarch64 >/dev/null 2>&1 || true
  update-binfmts --enable qemu-aarch64 >/dev/null 2>&1 || true
fi
[ -e "$binfmt/qemu-aarch64" ] ||
  refuse "binfmt_misc has no qemu-aarch64 and update-binfmts --import qemu-aarch64 did not add it"
grep -qx enabled "$binfmt/qemu-aarch64" ||
  refuse "binfmt_misc's qemu-aarch64 is disabled: update-binfmts --enable qemu-aarch64"
grep -q '^flags:.*F' "$binfmt/qemu-aarch64" ||
  refuse "binfmt_misc's qemu-aarch64 ($(sed -n 's/^interpreter //p' "$binfmt/qemu-aarch64"))" \
         "lacks the F flag, so it cannot run inside a root; use Debian's qemu-user-static:" \
         "echo -1 > $binfmt/qemu-aarch64 && update-binfmts --import qemu-aarch64"

# --- the root, made once per package list ------------------------------------------------------
mapfile -t packages < <("$checkout/scripts/install-deps.sh" --print-packages --arch=arm64 \
                          $lean 2>/dev/null)
[ ${#packages[@]} -gt 0 ] || refuse "scripts/install-deps.sh --print-packages printed nothing"
cache=${KVBENCH_ARM64_ROOT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kvbench}
key=$(printf '%s\n' "bookworm arm64 apt recipe $recipe_version" "${packages[@]}" | sha256sum |
      cut -c1-12)
kind=arm64-${lean:+lean-}root
root=$cache/$kind-$key
mkdir -p "$cache"

make_root() {
  local new=$root.new t0=$SECONDS estimate="15 to 60 minutes and 2.3 GB"
  [ -z "$lean" ] || estimate="about 20 minutes and 0.8 GB"
  echo "arm64-root: making $root: Debian 12 arm64 with ${#packages[@]} packages${lean:+ (lean)}" \
       "(WiredTiger is amd64-only in Debian: not in it); $estimate on 2 cores, as the load goes" >&2
  rm -rf --one-file-system "$new"
  mapfile -t sources < <("$checkout/scripts/debian-sources.sh" arm64)
  # In a mount namespace of its own, so nothing mmdebstrap mounts outlives it.
  if ! unshare -m --propagation private -- mmdebstrap --quiet --arch=arm64 --variant=apt \
      --include="$(IFS=,; echo "${packages[*]}")" \
      --aptopt='Acquire::Check-Valid-Until "false"' \
      --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/locale/*' \
      --dpkgopt='path-exclude=/usr/share/doc/*' \
      --dpkgopt='path-include=/usr/share/doc/*/copyright' \
      bookworm "$new" "${sources[@]}" >&2; then
    rm -rf --one-file-system "$new"
    echo "arm64-root: mmdebstrap failed (output above); nothing was cached" >&2
    exit 1
  fi
  printf '%s\n' "${packages[@]}" > "$new/etc/kvbench-arm64-root"
  mv "$new" "$root"
  echo "arm64-root: made $root in $((SECONDS - t0)) s, $(du -sm "$root" | cut -f1) MB" >&2
}

# Each run holds a shared lock on its root (runs share it: each mounts in a namespace of its own);
# making one, or removing an old one, an exclusive lock, taken only when there is one to make.
exec 9>"$root.lock"
flock -s 9
if [ ! -f "$root/etc/kvbench-arm64-root" ]; then
  flock -u 9
  flock -x 9
  [ -f "$root/etc/kvbench-arm64-root" ] || make_root
  flock -s 9
fi
for old in "$cache/$kind"-*.lock; do
  [ "$old" != "$root.lock" ] && [ -e "$old" ] || continue
  if (flock -n -x 8 || exit 1; rm -rf --one-file-system "${old%.lock}" "${old%.lock}.new"
      rm -f "$old") 8<"$old"; then
    echo "arm64-root: removed the old root ${old%.lock} (its package list differs)" >&2
  fi
done
QEMU_CPU=$cpu chroot "$root" /bin/true 2>/dev/null ||
  refuse "arm64 binaries do not run in $root under qemu-aarch64 -cpu $cpu" \
         "($(head -3 "$binfmt/qemu-aarch64" | tr '\n' ' '))"
if [ "$mode" = create ]; then
  echo "$root"
  exit 0
fi

# --- /proc/cpuinfo for the emulated core -------------------------------------------------------
# The Features line is what qemu gives this core in AT_HWCAP/AT_HWCAP2 (read from the emulated
# process's auxv), named as the Linux kernel names them, so cpuinfo and the running code agree.
hwcap_names=(fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm jscvt
  fcma lrcpc dcpop sha3 sm3 sm4 asimddp sha512 sve asimdfhm dit uscat ilrcpc flagm ssbs sb paca
  pacg)
hwcap2_names=(dcpodp sve2 sveaes svepmull svebitperm svesha3 svesm4 flagm2 frint svei8mm svef32mm
  svef64mm svebf16 i8mm bf16 dgh rng bti mte ecv afp rpres mte3 sme smei16i64 smef64f64 smei8i32
  smef16f32 smeb16f32 smef32f32 smefa64 wfxt ebf16 sveebf16)
cpuinfo() {
  local words hwcap=0 hwcap2=0 i features=()
  read -r -a words <<<"$(QEMU_CPU=$cpu chroot "$root" od -An -tx8 -v /proc/self/auxv | tr '\n' ' ')"
  for ((i = 0; i + 1 < ${#words[@]}; i += 2)); do
    case $((16#${words[i]})) in
      16) hwcap=$((16#${words[i + 1]})) ;;
      26) hwcap2=$((16#${words[i + 1]})) ;;
    esac
  done
  [ "$hwcap" != 0 ] || refuse "qemu-aarch64 -cpu $cpu reported no AT_HWCAP"
  for i in "${!hwcap_names[@]}"; do (((hwcap >> i) & 1)) && features+=("${hwcap_names[i]}"); done
  for i in "${!hwcap2_names[@]}"; do (((hwcap2 >> i) & 1)) && features+=("${hwcap2_names[i]}"); done
  local m=$((${midr[$cpu]})) n
  for ((n = 0; n < $(nproc --all); n++)); do
    printf 'processor\t: %d\nBogoMIPS\t: 50.00\nFeatures\t: %s\n' "$n" "${features[*]}"
    printf 'CPU implementer\t: 0x%02x\nCPU architecture: 8\nCPU variant\t: 0x%x\n' \
           $((m >> 24)) $(((m >> 20) & 0xf))
    printf 'CPU part\t: 0x%03x\nCPU revision\t: %d\n\n' $(((m >> 4) & 0xfff)) $((m & 0xf))
  done
}

# --- run ---------------------------------------------------------------------------------------
owner=$(stat -c %u:%g "$checkout")
cwd=$(pwd -P)
case "$cwd" in "$checkout" | "$checkout"/*) ;; *) cwd=$checkout ;; esac
# A worktree's git directory lives elsewhere: mount it too, so the build can read the revision.
gitdir=$(git -c safe.directory='*' -C "$checkout" rev-parse --path-format=absolute \
           --git-common-dir 2>/dev/null || true)
case "$gitdir" in "$checkout"/*) gitdir= ;; esac
run=$(mktemp -d "$cache/run.XXXXXX")
trap 'rm -rf --one-file-system "$run"' EXIT
mkdir -m 1777 "$run/tmp"
cpuinfo > "$run/cpuinfo"
set +e
unshare -m --propagation private -- \
  "$self" --in-namespace "$root" "$run" "$owner" "$cwd" "$gitdir" "$cpu" -- "${cmd[@]}"
rc=$?
set -e
exit $rc
