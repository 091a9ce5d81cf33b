#!/usr/bin/env bash
# Builds an aarch64 sysroot of kvbench's dependencies from Debian's arm64 packages, for the
# arm64-cross-* presets. Debian's arm64 -dev packages of rocksdb and gflags are not
# Multi-Arch: same, so they cannot be installed beside the amd64 ones: instead they are downloaded
# through a private apt configuration (its own lists and cache; the system's apt sources and
# dpkg database are never touched) and unpacked with dpkg-deb -x.
#
#   scripts/arm64-sysroot.sh [DIR]     # default: $KVBENCH_ARM64_SYSROOT or ~/.cache/kvbench/sysroot-arm64
#
# Idempotent: a sysroot whose stamp lists the same packages is kept as it is.
set -euo pipefail
cd "$(dirname "$0")/.."

sysroot=${1:-${KVBENCH_ARM64_SYSROOT:-${XDG_CACHE_HOME:-$HOME/.cache}/kvbench/sysroot-arm64}}
aptdir=${XDG_CACHE_HOME:-$HOME/.cache}/kvbench/apt-arm64

# The arm64 counterparts of install-deps.sh's libraries (no WiredTiger: Debian builds it for amd64
# only), plus the C/C++ runtime, so the sysroot is
# complete both for linking and for qemu-aarch64 -L.
roots=(
  libc6 libc6-dev libstdc++6 libgcc-s1 libstdc++-12-dev libgcc-12-dev
  librocksdb-dev liblmdb-dev
  libxxhash-dev liblz4-dev libzstd-dev libsnappy-dev libisal-dev
  libgflags-dev libgtest-dev libgmock-dev libbenchmark-dev
)

mkdir -p "$aptdir"/{lists/partial,cache/archives/partial,etc/preferences.d,etc/sources.list.d,debs}
: > "$aptdir/status"
# The same mirrors as the system's sources, for arm64 only.
scripts/debian-sources.sh arm64 > "$aptdir/etc/sources.list"
cat > "$aptdir/apt.conf" <<EOF
Dir::State "$aptdir";
Dir::State::Lists "$aptdir/lists";
Dir::State::status "$aptdir/status";
Dir::Cache "$aptdir/cache";
Dir::Etc::SourceList "$aptdir/etc/sources.list";
Dir::Etc::SourceParts "$aptdir/etc/sources.list.d";
Dir::Etc::Preferences "$aptdir/etc/preferences";
Dir::Etc::PreferencesParts "$aptdir/etc/preferences.d";
APT::Architecture "arm64";
APT::Architectures { "arm64"; };
APT::Sandbox::User "root";
EOF
export APT_CONFIG=$aptdir/apt.conf

echo "arm64-sysroot: updating the private arm64 package lists in $aptdir" >&2
apt-get update -q >/dev/null

# The roots and everything they depend on (no recommends), as real package names.
mapfile -t pkgs < <(apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts \
                      --no-breaks --no-replaces --no-enhances "${roots[@]}" |
                    grep -E '^[a-z0-9]' | sed 's/:arm64$//' | sort -u)
# Packages that only matter at install time or for other tools: skip them.
skip='^(debconf|debconf-2.0|perl-base|dpkg|install-info|tar|gcc-12-base|libcrypt1|libselinux1|libpcre2-8-0|libzstd1-dev|gcc-12|cpp-12|binutils.*|python3.*|libpython.*|cmake.*|sensible-utils|.*-doc)$'
mapfile -t pkgs < <(printf '%s\n' "${pkgs[@]}" | grep -vE "$skip")
stamp="$sysroot/.kvbench-sysroot"
want=$(apt-cache policy "${pkgs[@]}" 2>/dev/null | awk '/^[a-z0-9]/{p=$1} /Candidate:/{print p, $2}')
# One maker at a time; and a sysroot is used only if its stamp matches and its C runtime is there
# (a making or a removal cut short leaves neither a stamp nor a sysroot that passes for complete).
exec 9>"$sysroot.lock"
flock 9
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] &&
   [ -f "$sysroot/usr/lib/aarch64-linux-gnu/Scrt1.o" ]; then
  echo "arm64-sysroot: $sysroot is up to date (${#pkgs[@]} packages)" >&2
  echo "$sysroot"
  exit 0
fi

echo "arm64-sysroot: downloading ${#pkgs[@]} arm64 packages" >&2
(cd "$aptdir/debs" && apt-get download -q "${pkgs[@]/%/:arm64}" >/dev/null)
rm -rf "$sysroot.new"
mkdir -p "$sysroot.new"
for deb in "$aptdir"/debs/*_arm64.deb "$aptdir"/debs/*_all.deb; do
  [ -f "$deb" ] || continue
  dpkg-deb -x "$deb" "$sysroot.new"
done
# Absolute symlinks (libfoo.so -> /lib/aarch64-linux-gnu/libfoo.so.1) must point inside the sysroot.
find "$sysroot.new" -type l | while read -r link; do
  target=$(readlink "$link")
  case "$target" in
    /*) ln -sfn "$sysroot${target}" "$link" ;;
  esac
done
rm -f "$stamp"
rm -rf "$sysroot"
mv "$sysroot.new" "$sysroot"
# Symlinks were written for the final path, so they are right after the move.
echo "$want" > "$stamp"
echo "arm64-sysroot: $sysroot ready (${#pkgs[@]} packages)" >&2
echo "$sysroot"
