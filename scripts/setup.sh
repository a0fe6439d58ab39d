#!/usr/bin/env bash
# One step from a fresh Debian 12 checkout to a built fitspeed: installs the
# missing Debian packages, configures and builds into $BUILD_DIR (default
# build/). Extra arguments go to CMake's configure step. With CI=true warnings
# are errors.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh

build_dir=${BUILD_DIR:-build}
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
werror=OFF
[[ "${CI:-}" == true ]] && werror=ON

if [[ ! -f "$build_dir/CMakeCache.txt" ]]; then
  cmake -S . -B "$build_dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
        -DFITSPEED_WERROR="$werror" "$@" >/dev/null
else
  cmake "$build_dir" -DFITSPEED_WERROR="$werror" "$@" >/dev/null
fi
cmake --build "$build_dir" --parallel "$(nproc)"
