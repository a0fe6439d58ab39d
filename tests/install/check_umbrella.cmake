# Script mode: include/fitspeed/fitspeed.h includes every installed public
# header (include/fitspeed/<layer>/*.h less evidence/), so that the install
# test, which compiles a program on the umbrella against the installed
# headers, compiles each of them (docs/design.md, "Public API"). Fails naming
# each header the umbrella lacks and each include that names no header.
#
#   cmake -DROOT=<source dir> -P tests/install/check_umbrella.cmake
cmake_minimum_required(VERSION 3.25)

if(NOT DEFINED ROOT)
  message(FATAL_ERROR "usage: cmake -DROOT=<source dir> -P check_umbrella.cmake")
endif()
file(GLOB_RECURSE headers RELATIVE ${ROOT}/include ${ROOT}/include/fitspeed/*/*.h)
list(FILTER headers EXCLUDE REGEX "^fitspeed/evidence/")
file(STRINGS ${ROOT}/include/fitspeed/fitspeed.h lines REGEX "^#include \"")
set(included "")
foreach(line ${lines})
  string(REGEX REPLACE "^#include \"([^\"]+)\".*" "\\1" header "${line}")
  list(APPEND included ${header})
endforeach()
set(problems 0)
foreach(header ${headers})
  if(NOT header IN_LIST included)
    message("include/fitspeed/fitspeed.h lacks #include \"${header}\"")
    math(EXPR problems "${problems} + 1")
  endif()
endforeach()
foreach(header ${included})
  if(NOT header IN_LIST headers)
    message("include/fitspeed/fitspeed.h includes \"${header}\", not an installed public header")
    math(EXPR problems "${problems} + 1")
  endif()
endforeach()
list(LENGTH headers count)
if(problems GREATER 0)
  message(FATAL_ERROR "${problems} problem(s) with the umbrella header")
endif()
message(STATUS "the umbrella includes all ${count} public headers")
