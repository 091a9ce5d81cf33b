#!/usr/bin/env bash
# Prints the native preset for this machine and compiler: host-preset.sh [gcc|clang]
case "$(uname -m)" in
  x86_64|amd64) arch=x86 ;;
  aarch64|arm64) arch=arm ;;
  *) echo "host-preset: no preset for $(uname -m)" >&2; exit 1 ;;
esac
echo "$arch-${1:-gcc}-native"
