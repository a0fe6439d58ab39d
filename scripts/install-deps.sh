#!/usr/bin/env bash
# Installs the Debian 12 packages fitspeed builds and tests with, when missing.
# Needs root (or sudo). Nothing else is downloaded, at build or test time.
set -euo pipefail

packages=(
  cmake ninja-build g++ pkg-config
  libeigen3-dev libgsl-dev libceres-dev libfmt-dev libcli11-dev nlohmann-json3-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libdnnl-dev ocl-icd-opencl-dev
  libprotobuf-dev protobuf-compiler
  libopenmpi-dev openmpi-bin
  # The Python module (python/, docs/python.md) and its tests: pybind11 and
  # Debian's interpreter headers; numpy (fit covariances as arrays), pandas
  # (samples as DataFrames), pytest, and the example notebook executed by
  # nbclient on an ipykernel, its figures drawn by matplotlib.
  python3-dev pybind11-dev python3-numpy python3-pandas python3-pytest
  python3-matplotlib python3-nbclient python3-nbformat python3-ipykernel
  # The HTML reports' browser test (ctest html.BrowserRendersEveryReport,
  # tests/html/check_reports.py): Debian's chromium renders every report kind
  # headless and screenshots it.
  chromium
  # `pip install --no-build-isolation .` (pyproject.toml, setup.py) and its
  # test, python.test_pip_install: venv with its bundled pip, and the
  # setuptools and wheel that build the package without downloading them.
  python3-venv python3-pip python3-setuptools python3-wheel
  # The format check (ctest format.ClangFormat, scripts/check-format.sh):
  # Debian 12's clang-format, whose version fixes what the check accepts.
  clang-format-14
)
# The sanitizer and fuzzer build (.ci/run) needs clang, its sanitizer runtimes,
# its OpenMP and lld.
if [[ "${FITSPEED_WITH_FUZZ:-0}" == 1 ]]; then
  packages+=(clang libclang-rt-14-dev libomp-dev lld)
fi
# .ci/run's two release builds of the library share ccache's objects.
if [[ "${FITSPEED_WITH_CCACHE:-0}" == 1 ]]; then
  packages+=(ccache)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [[ ${#missing[@]} -eq 0 ]]; then
  exit 0
fi

echo "install-deps: installing ${missing[*]}" >&2
sudo=()
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "install-deps: need root or sudo to install ${missing[*]}" >&2; exit 1; }
  sudo=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
