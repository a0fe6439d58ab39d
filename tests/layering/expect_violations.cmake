# Runs cmake/CheckLayering.cmake on the tree tests/layering/forbidden and
# asserts that it fails and names each refused include by file and line, and
# nothing else (the count of problems is the six listed here).
#
#   cmake -DCHECKER=<CheckLayering.cmake> -DFIXTURE=<tree> -P expect_violations.cmake
execute_process(COMMAND ${CMAKE_COMMAND} -DROOT=${FIXTURE} -DCHECK_DOC=OFF -P ${CHECKER}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(out "${out}${err}")
message("${out}")
if(rc EQUAL 0)
  message(FATAL_ERROR "the layering check passed a tree with refused includes")
endif()
set(expected
  "src/device/step_model.cc:3: \"fitspeed/evidence/kernels.h\": device may not include evidence"
  "src/device/host_device.cc:2: \"../evidence/csv_table.h\": device may not include evidence"
  "include/fitspeed/model/report.h:4: \"fitspeed/io/output.h\": model may not include io (model may include: core)"
  "include/fitspeed/model/report.h:5: \"io/text.h\": a public header may include only public headers"
  "src/newlayer/thing.cc: layer 'newlayer' is not in the table"
  "src/core/median.cc:2: \"nowhere.h\": cannot tell the layer of this header"
  "6 layering problem(s)")
foreach(line IN LISTS expected)
  string(FIND "${out}" "${line}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "the layering check did not print: ${line}")
  endif()
endforeach()
