#!/usr/bin/env bash
# Prints one-line apt sources for Debian 12 (bookworm, bookworm-updates, bookworm-security) on the
# mirrors this machine's apt is configured with, for another architecture:
#   scripts/debian-sources.sh ARCH      # e.g. arm64
# Used by arm64-sysroot.sh (a private apt) and arm64-root.sh (mmdebstrap), so both fetch from
# the same place as the system's apt-get.
set -euo pipefail
arch=${1:?usage: debian-sources.sh ARCH}
mirrors=$({ cat /etc/apt/sources.list.d/*.sources /etc/apt/sources.list 2>/dev/null || true; } |
          awk '$1=="URIs:"{print $2} $1=="deb"{print $2}' | sort -u)
[ -n "$mirrors" ] || { echo "debian-sources: no Debian mirror found in /etc/apt" >&2; exit 1; }
opts="[arch=$arch signed-by=/usr/share/keyrings/debian-archive-keyring.gpg]"
for m in $mirrors; do
  case "$m" in
    *security*) echo "deb $opts $m bookworm-security main" ;;
    *) for suite in bookworm bookworm-updates; do echo "deb $opts $m $suite main"; done ;;
  esac
done
