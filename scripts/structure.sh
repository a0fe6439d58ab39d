#!/usr/bin/env bash
# Prints fitspeed's structure: lines per layer folder, which layer includes which
# (from the `#include "..."` lines), and the public headers with a rough count of
# the names they declare (declarations at column 0). Run from the repo root:
#   scripts/structure.sh
set -u
echo "## Lines per layer (files, lines)"
for d in $(ls -d src/*/ include/fitspeed/*/ tools/fitspeed/ mpi/ 2>/dev/null); do
  n=$(find $d -type f \( -name '*.cc' -o -name '*.h' \) | wc -l)
  l=$(find $d -type f \( -name '*.cc' -o -name '*.h' \) -print0 | xargs -0 cat 2>/dev/null | wc -l)
  printf "%-28s %4d files %6d lines\n" "$d" "$n" "$l"
done
echo; echo "## Which layer includes which (src/<layer> and include/fitspeed/<layer>; tools = CLI)"
for L in $(cd src && ls -d */ | tr -d /) tools; do
  if [ "$L" = tools ]; then dirs="tools/fitspeed"; else dirs="src/$L include/fitspeed/$L"; fi
  deps=$(grep -rhoE '#include "(fitspeed/)?[a-z_]+/' $dirs 2>/dev/null | sed -E 's/#include "(fitspeed\/)?//; s#/##' | sort -u | grep -vx "$L" | grep -E "^($(cd src && ls -d */ | tr -d / | paste -sd'|'))$" | paste -sd' ')
  printf "%-10s -> %s\n" "$L" "$deps"
done
echo; echo "## Public headers"
h=$(find include/fitspeed -name '*.h' | wc -l); l=$(find include/fitspeed -name '*.h' -print0 | xargs -0 cat | wc -l)
names=$(find include/fitspeed -name '*.h' -print0 | xargs -0 grep -hE '^(struct|class|enum class|enum|using|inline constexpr|constexpr) [A-Za-z_]|^[A-Za-z_][A-Za-z_:<>,& *]* [A-Za-z_][A-Za-z_0-9:]*\(' | grep -v '^using namespace' | wc -l)
echo "$h headers, $l lines, about $names top-level names (struct/class/enum/using/constexpr/function declarations at column 0)"
inst=$(find include/fitspeed -name '*.h' ! -path '*/evidence/*' ! -name mpi_communicator.h)
ni=$(echo "$inst" | wc -l); li=$(cat $inst | wc -l)
namesi=$(cat $inst | grep -hE '^(struct|class|enum class|enum|using|inline constexpr|constexpr) [A-Za-z_]|^[A-Za-z_][A-Za-z_:<>,& *]* [A-Za-z_][A-Za-z_0-9:]*\(' | grep -v '^using namespace' | wc -l)
echo "installed (cmake --install): $ni headers, $li lines, about $namesi names"
