#!/usr/bin/env bash
# get-sources.sh <dep> <version> <dir>
#
# Fetches the upstream source of <dep> <version> from the Debian archive and unpacks it into <dir>,
# ready for -DKVBENCH_<DEP>_SOURCE_DIR=<dir>. It uses a PRIVATE apt configuration (its own
# sources list with deb-src lines for bookworm, trixie and sid against the mirror the system
# uses, its own lists and download cache under ${XDG_CACHE_HOME:-$HOME/.cache}/kvbench/apt); the
# system's apt sources and state are never touched, and it needs no root.
#
# What is unpacked is the .orig tarball Debian carries for that version (the upstream release,
# without Debian's patches), so two versions compare like for like even when the archive serves
# only the orig tarball of one of them (rocksdb 9.x). The tarball's SHA-256 is checked against the
# Sources index, which apt has verified against the archive's signed Release file.
#
# deps: rocksdb lz4 zstd xxhash lmdb (wiredtiger: Debian has no source package for it).
# Exit status: 0 ok (the tree's path is the last line of stdout), 2 unknown dep/version or usage,
# 1 download or unpack failure. An existing tree of the same dep and version is reused.
set -euo pipefail

usage() {
  echo "usage: get-sources.sh <dep> <version> <dir>   (dep: rocksdb lz4 zstd xxhash lmdb)" >&2
  exit 2
}
[ $# -eq 3 ] || usage
dep=$1 version=$2 dir=$3

case "$dep" in
  rocksdb) srcpkg=rocksdb ;;
  lz4) srcpkg=lz4 ;;
  zstd) srcpkg=libzstd ;;
  xxhash) srcpkg=xxhash ;;
  lmdb) srcpkg=lmdb ;;
  wiredtiger)
    echo "get-sources: Debian has no source package for wiredtiger; check out" \
         "https://github.com/wiredtiger/wiredtiger at a tag and pass -DKVBENCH_WIREDTIGER_SOURCE_DIR" >&2
    exit 2 ;;
  *)
    echo "get-sources: unknown dependency '$dep' (known: rocksdb lz4 zstd xxhash lmdb)" >&2
    exit 2 ;;
esac
if ! [[ "$version" =~ ^[0-9]+(\.[0-9]+)+$ ]]; then
  echo "get-sources: version '$version' is not an upstream version like 1.9.4" >&2
  exit 2
fi

stamp="$dir/.kvbench-source"
if [ -f "$stamp" ] && grep -qx "dep=$dep" "$stamp" && grep -qx "version=$version" "$stamp"; then
  echo "get-sources: reusing $dep $version in $dir" >&2
  (cd "$dir" && pwd)
  exit 0
fi
if [ -e "$dir" ] && [ -n "$(ls -A "$dir" 2>/dev/null)" ]; then
  echo "get-sources: $dir exists and is not an unpacked $dep $version (no matching" \
       ".kvbench-source); remove it or choose another directory" >&2
  exit 1
fi

# The mirror the system uses (deb822 or one-line sources), else Debian's default.
mirror=$(sed -n 's/^URIs:[[:space:]]*\(http[^[:space:]]*\/debian\)[[:space:]]*$/\1/p' \
           /etc/apt/sources.list.d/*.sources 2>/dev/null | head -n1 || true)
if [ -z "$mirror" ]; then
  mirror=$(sed -n 's/^deb[[:space:]]\+\(\[[^]]*\][[:space:]]\+\)\?\(http[^[:space:]]*\/debian\)[[:space:]].*/\2/p' \
             /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null | head -n1 || true)
fi
mirror=${mirror:-http://deb.debian.org/debian}
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
[ -r "$keyring" ] || { echo "get-sources: $keyring missing (apt-get install debian-archive-keyring)" >&2; exit 1; }

apt_home="${XDG_CACHE_HOME:-$HOME/.cache}/kvbench/apt"
mkdir -p "$apt_home/lists/partial" "$apt_home/cache/archives/partial" "$apt_home/parts" \
         "$apt_home/orig"
cat >"$apt_home/sources.list" <<EOF
deb-src [signed-by=$keyring] $mirror bookworm main
deb-src [signed-by=$keyring] $mirror trixie main
deb-src [signed-by=$keyring] $mirror sid main
EOF
apt_opts=(
  -o "Dir::Etc::SourceList=$apt_home/sources.list"
  -o "Dir::Etc::SourceParts=$apt_home/parts"
  -o "Dir::State::Lists=$apt_home/lists"
  -o "Dir::Cache=$apt_home/cache"
  -o "Dir::Cache::pkgcache=" -o "Dir::Cache::srcpkgcache="
  -o "Debug::NoLocking=1"
  -o "APT::Sandbox::User=$(id -un)"
)

# Refresh the private lists when they are missing or older than a day.
if [ -z "$(find "$apt_home/lists" -maxdepth 1 -name '*_source_Sources*' -mmin -1440 2>/dev/null | head -n1)" ]; then
  echo "get-sources: updating the private source lists ($mirror: bookworm trixie sid)" >&2
  apt-get "${apt_opts[@]}" -q update >&2
fi

# Every record of the source package in the private lists: "version directory" then its files.
records=$(apt-cache "${apt_opts[@]}" showsrc "$srcpkg" 2>/dev/null || true)
if [ -z "$records" ]; then
  echo "get-sources: source package '$srcpkg' is not in the private lists" >&2
  exit 1
fi
# Pick the newest Debian revision whose upstream part is exactly <version> (ignoring an epoch, a
# +dfsg-style repack suffix and the Debian revision), and its .orig tarball and checksum.
read -r debver directory orig sha < <(awk -v want="$version" '
  function flush() { if (u == want && o != "") print v, d, o, h; v = u = d = o = h = "" }
  /^$/ { flush(); next }
  /^Version: / { v = $2; u = v; sub(/^[0-9]+:/, "", u); sub(/-[^-]*$/, "", u); sub(/[+~].*$/, "", u) }
  /^Directory: / { d = $2 }
  /^Checksums-Sha256:/ { insha = 1; next }
  /^[^ ]/ { insha = 0 }
  insha && $3 ~ /\.orig\.tar\.[a-z0-9]+$/ { o = $3; h = $1 }
  END { flush() }
' <<<"$records" | sort -V | tail -n1) || true
if [ -z "${debver:-}" ]; then
  known=$(awk '/^Version: / { v = $2; sub(/^[0-9]+:/, "", v); sub(/-[^-]*$/, "", v); sub(/[+~].*$/, "", v); print v }' \
            <<<"$records" | sort -uV | tr '\n' ' ')
  echo "get-sources: $dep $version is not in Debian bookworm/trixie/sid; versions there: $known" >&2
  exit 2
fi

tarball="$apt_home/orig/$orig"
if ! [ -f "$tarball" ] || ! echo "$sha  $tarball" | sha256sum -c --status; then
  echo "get-sources: downloading $mirror/$directory/$orig (Debian $srcpkg $debver)" >&2
  rm -f "$tarball"
  /usr/lib/apt/apt-helper "${apt_opts[@]}" download-file "$mirror/$directory/$orig" \
    "$tarball.part" "SHA256:$sha" >&2
  mv "$tarball.part" "$tarball"
fi
echo "$sha  $tarball" | sha256sum -c --status || { echo "get-sources: checksum mismatch for $tarball" >&2; exit 1; }

tmp="$dir.kvbench-unpack.$$"
rm -rf "$tmp"
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
tar -xf "$tarball" -C "$tmp"
# Orig tarballs hold one top-level directory; unpack its contents as <dir>.
top=$(find "$tmp" -mindepth 1 -maxdepth 1)
if [ "$(printf '%s\n' "$top" | wc -l)" -ne 1 ] || ! [ -d "$top" ]; then top=$tmp; fi
mkdir -p "$(dirname "$dir")"
rmdir "$dir" 2>/dev/null || true
mv "$top" "$dir"
cat >"$stamp" <<EOF
dep=$dep
version=$version
debian_source=$srcpkg
debian_version=$debver
tarball=$mirror/$directory/$orig
sha256=$sha
EOF
echo "get-sources: $dep $version (Debian $srcpkg $debver orig tarball) unpacked in $dir" >&2
(cd "$dir" && pwd)
