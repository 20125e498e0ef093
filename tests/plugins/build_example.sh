#!/bin/sh
# Installs this build of exactly to INSTALL_PREFIX, builds examples/uppercase against the installed
# package in BUILD_DIR, and, given CHECKER, runs `CHECKER BUILD_DIR/libuppercase.so` to load it.
# Proves that find_package(exactly) and exactly::sdk work for a plugin author.
#   build_example.sh INSTALL_PREFIX BUILD_DIR [CHECKER]
set -eu
if [ $# -lt 2 ]; then
  echo "usage: $0 INSTALL_PREFIX BUILD_DIR [CHECKER]" >&2
  exit 2
fi
prefix=$1
build=$2
checker=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
source_dir=$(cd "$here/../.." && pwd)
main_build=${EXACTLY_BUILD_DIR:-$(pwd)}

rm -rf "$prefix" "$build"
cmake --install "$main_build" --prefix "$prefix" >/dev/null
cmake -S "$source_dir/examples/uppercase" -B "$build" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_COMPILE_WARNING_AS_ERROR=ON >/dev/null
cmake --build "$build"
if [ -n "$checker" ]; then
  "$checker" "$build/libuppercase.so"
fi
