#!/usr/bin/env bash
# Fails, naming each file and line, where a C++ file of the tree is not
# formatted as .clang-format says (STYLE.md: applied to every file you touch).
# ctest format.ClangFormat (label `format`) runs it; clang-format-14 is Debian
# 12's, and another version may format differently.
#
#   scripts/check-format.sh [CLANG_FORMAT]      (default: clang-format-14)
#   fix a file: clang-format-14 -i FILE
set -euo pipefail
cd "$(dirname "$0")/.."
clang_format=${1:-clang-format-14}

# Not checked, each with its reason.
excluded=(
  # Fixture of the layering check: expect_violations.cmake names its lines.
  tests/layering/forbidden/src/device/step_model.cc
)

files=()
while IFS= read -r f; do
  skip=0
  for e in "${excluded[@]}"; do [[ "$f" == "$e" ]] && skip=1 && break; done
  ((skip)) || files+=("$f")
done < <(find src include tools python/src tests bench examples fuzz mpi \
              -type f \( -name '*.cc' -o -name '*.h' \) | LC_ALL=C sort)

# An exclusion that names no file is stale: it fails too, so the list only shrinks.
status=0
for e in "${excluded[@]}"; do
  [[ -f "$e" ]] || { echo "check-format: excluded $e does not exist: remove it from the list" >&2; status=1; }
done

echo "check-format: ${#files[@]} files, ${#excluded[@]} excluded, with $("$clang_format" --version)"
if ! "$clang_format" --dry-run --Werror "${files[@]}"; then
  echo "check-format: the files above are not formatted; run $clang_format -i on them" >&2
  status=1
fi
exit $status
