# Which layer may include which: every `#include "..."` in src/, include/,
# tools/, mpi/ and python/ must name a header of the including file's own layer or of a
# layer the table below allows. This table is the one place the rule lives;
# docs/design.md ("Layers") shows it and this script fails when the two differ.
#
#   cmake -DROOT=<source dir> -P cmake/CheckLayering.cmake   (ctest: layering.Includes)
#
# Fails, printing `file:line: "include"` and the rule, on: an include from a
# layer not allowed; a public header (include/) that includes a private one
# (src/); a file or include whose layer is not in the table; an include whose
# layer cannot be told; an exception below that no longer matches an include
# (so the list only shrinks). -DCHECK_DOC=OFF skips the comparison with
# docs/design.md (for test trees without it).

# A file's layer: include/fitspeed/<layer>/ and src/<layer>/ by folder,
# include/fitspeed/fitspeed.h is "umbrella", tools/ is "tools", mpi/ is "mpi",
# python/ is "python".
# A header named "<layer>/x.h" is the private header src/<layer>/x.h;
# "fitspeed/<layer>/x.h" the public one; any other name is looked up beside the
# including file (e.g. "kinds/kind.h" from src/model/).
#
# LAYER_<name>: what <name> may include besides itself.
set(LAYERS core fit io model timing device calibrate project llm scenario evidence umbrella mpi tools python)
set(LAYER_core "")
set(LAYER_fit core)
set(LAYER_io core fit)
set(LAYER_model core)
set(LAYER_timing core fit io model)
set(LAYER_device core fit io model timing)
set(LAYER_calibrate core fit io model timing device)
set(LAYER_project core fit io)
set(LAYER_llm core fit io model device)
set(LAYER_scenario core fit io model timing device calibrate project llm)
set(LAYER_evidence core fit io model timing device calibrate project llm)
set(LAYER_umbrella core fit io model timing device calibrate project llm scenario)
set(LAYER_mpi core timing)
set(LAYER_tools core fit io model timing device calibrate project llm scenario evidence umbrella mpi)
set(LAYER_python core fit io model timing device calibrate project llm scenario umbrella)

# Named exceptions, "file|include|why": each must match an include that the
# table refuses, and goes when the include does.
set(EXCEPTIONS
)

cmake_minimum_required(VERSION 3.25)

if(NOT DEFINED ROOT)
  message(FATAL_ERROR "usage: cmake -DROOT=<source dir> [-DCHECK_DOC=OFF] -P CheckLayering.cmake")
endif()
if(NOT DEFINED CHECK_DOC)
  set(CHECK_DOC ON)
endif()
get_filename_component(ROOT "${ROOT}" REALPATH)

set(problems 0)
macro(report text)
  message("${text}")
  math(EXPR problems "${problems} + 1")
endmacro()

# Sets ${out} to the layer of `rel` (a path relative to ROOT), "" if none.
function(layer_of_path rel out)
  set(layer "")
  if(rel STREQUAL "include/fitspeed/fitspeed.h")
    set(layer umbrella)
  elseif(rel MATCHES "^include/fitspeed/([^/]+)/")
    set(layer "${CMAKE_MATCH_1}")
  elseif(rel MATCHES "^src/([^/]+)/")
    set(layer "${CMAKE_MATCH_1}")
  elseif(rel MATCHES "^tools/")
    set(layer tools)
  elseif(rel MATCHES "^mpi/")
    set(layer mpi)
  elseif(rel MATCHES "^python/")
    set(layer python)
  endif()
  set(${out} "${layer}" PARENT_SCOPE)
endfunction()

# Sets ${out} to the layer of the header `inc` included from `rel`, "" if it
# cannot be told.
function(layer_of_include rel inc out)
  set(layer "")
  get_filename_component(dir "${ROOT}/${rel}" DIRECTORY)
  if(inc STREQUAL "fitspeed/fitspeed.h")
    set(layer umbrella)
  elseif(inc MATCHES "^fitspeed/([^/]+)/")
    set(layer "${CMAKE_MATCH_1}")
  elseif(EXISTS "${dir}/${inc}")
    get_filename_component(target "${dir}/${inc}" REALPATH)
    file(RELATIVE_PATH target_rel "${ROOT}" "${target}")
    layer_of_path("${target_rel}" layer)
  elseif(inc MATCHES "^([^/]+)/")
    # ${CMAKE_MATCH_1} must be read after the match, not in the same if().
    if(CMAKE_MATCH_1 IN_LIST LAYERS)
      set(layer "${CMAKE_MATCH_1}")
    endif()
  endif()
  set(${out} "${layer}" PARENT_SCOPE)
endfunction()

# The 1-based line of the first occurrence of `text` in `file`.
function(line_of file text out)
  file(READ "${file}" content)
  string(FIND "${content}" "${text}" pos)
  string(SUBSTRING "${content}" 0 ${pos} before)
  string(REGEX MATCHALL "\n" newlines "${before}")
  list(LENGTH newlines n)
  math(EXPR n "${n} + 1")
  set(${out} ${n} PARENT_SCOPE)
endfunction()

set(used_exceptions "")
file(GLOB_RECURSE files RELATIVE "${ROOT}" "${ROOT}/src/*.h" "${ROOT}/src/*.cc"
     "${ROOT}/src/*.in" "${ROOT}/include/*.h" "${ROOT}/tools/*.h" "${ROOT}/tools/*.cc"
     "${ROOT}/tools/*.in" "${ROOT}/mpi/*.h" "${ROOT}/mpi/*.cc" "${ROOT}/python/*.cc")
list(SORT files)
foreach(rel IN LISTS files)
  layer_of_path("${rel}" layer)
  if(NOT layer IN_LIST LAYERS)
    report("${rel}: layer '${layer}' is not in the table of cmake/CheckLayering.cmake")
    continue()
  endif()
  file(STRINGS "${ROOT}/${rel}" include_lines REGEX "^[ \t]*#[ \t]*include[ \t]*\"")
  foreach(line IN LISTS include_lines)
    string(REGEX MATCH "\"([^\"]+)\"" _ "${line}")
    set(inc "${CMAKE_MATCH_1}")
    layer_of_include("${rel}" "${inc}" inc_layer)
    set(rule "")
    if(rel MATCHES "^include/" AND NOT inc MATCHES "^fitspeed/")
      set(rule "a public header may include only public headers (fitspeed/...)")
    elseif(inc_layer STREQUAL "")
      set(rule "cannot tell the layer of this header")
    elseif(NOT inc_layer IN_LIST LAYERS)
      set(rule "layer '${inc_layer}' is not in the table of cmake/CheckLayering.cmake")
    elseif(NOT inc_layer STREQUAL layer AND NOT inc_layer IN_LIST LAYER_${layer})
      string(REPLACE ";" ", " allowed "${LAYER_${layer}}")
      set(rule "${layer} may not include ${inc_layer} (${layer} may include: ${allowed})")
    endif()
    if(rule STREQUAL "")
      continue()
    endif()
    set(excused FALSE)
    foreach(exception IN LISTS EXCEPTIONS)
      string(REGEX MATCH "^([^|]+)\\|([^|]+)\\|" _ "${exception}")
      if(CMAKE_MATCH_1 STREQUAL rel AND CMAKE_MATCH_2 STREQUAL inc)
        set(excused TRUE)
        list(APPEND used_exceptions "${exception}")
      endif()
    endforeach()
    if(NOT excused)
      line_of("${ROOT}/${rel}" "${line}" n)
      report("${rel}:${n}: \"${inc}\": ${rule}")
    endif()
  endforeach()
endforeach()

foreach(exception IN LISTS EXCEPTIONS)
  if(NOT exception IN_LIST used_exceptions)
    report("stale exception (no such refused include any more; remove it): ${exception}")
  endif()
endforeach()

# docs/design.md shows the table as rows `| layer | may include |`.
if(CHECK_DOC)
  set(doc "${ROOT}/docs/design.md")
  if(NOT EXISTS "${doc}")
    report("docs/design.md is missing: it shows the layer table")
  else()
    file(READ "${doc}" doc_text)
    foreach(layer IN LISTS LAYERS)
      string(REPLACE ";" ", " allowed "${LAYER_${layer}}")
      if(allowed STREQUAL "")
        set(allowed "(nothing)")
      endif()
      set(row "| ${layer} | ${allowed} |")
      string(FIND "${doc_text}" "${row}" at)
      if(at EQUAL -1)
        report("docs/design.md: the layer table lacks the row '${row}' that this script enforces")
      endif()
    endforeach()
  endif()
endif()

if(problems GREATER 0)
  message(FATAL_ERROR "${problems} layering problem(s); the rules: docs/design.md, \"Layers\"")
endif()
list(LENGTH files n_files)
message("layering: ${n_files} files, every include allowed")
