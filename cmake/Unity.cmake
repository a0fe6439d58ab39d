# Unity builds: the files of one folder (a layer of src/, src/evidence, the
# CLI, one layer's tests) compiled as one translation unit. Most of a file's
# compile time at -O3 is the optimization of the same inline templates
# (nlohmann::json, fmt, CLI11, Eigen) that every file of the folder
# instantiates again; one unit per folder does it once. Five CLI files took
# 93 s of CPU one by one and 38 s as one unit (bench/README.md, "Build
# time"). Precompiled headers were measured too and made g++ slower.
#
# The grouping is by folder, not CMake's default batches of 8, so that two
# files of a folder always share a unit: a name that two files of one folder
# both define in an anonymous namespace fails at once, not when a later file
# shifts the batches. FITSPEED_UNITY=OFF compiles file by file (for
# incremental work on one file, and to check that each file includes what it
# uses).
option(FITSPEED_UNITY "Compile each source folder as one unit (faster full builds)" ON)

# fitspeed_unity(target): one unit per folder of the target's sources.
function(fitspeed_unity target)
  if(NOT FITSPEED_UNITY)
    return()
  endif()
  get_target_property(sources ${target} SOURCES)
  get_target_property(source_dir ${target} SOURCE_DIR)
  foreach(source ${sources})
    if(NOT source MATCHES "\\.cc$")
      continue()
    endif()
    get_filename_component(path ${source} ABSOLUTE BASE_DIR ${source_dir})
    get_filename_component(folder ${path} DIRECTORY)
    file(RELATIVE_PATH group ${PROJECT_SOURCE_DIR} ${folder})
    string(MAKE_C_IDENTIFIER "${group}" group)
    set_source_files_properties(${path} TARGET_DIRECTORY ${target} PROPERTIES UNITY_GROUP ${group})
  endforeach()
  set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_MODE GROUP)
endfunction()
