# Links Abseil's static archives instead of its shared libraries, without
# touching the project's CMakeLists.txt: for measuring what process start-up
# costs (docs/performance.md, "Whole process").
#
#   cmake -S . -B build/bench-static -G Ninja -DCMAKE_BUILD_TYPE=Release \
#     -DGGUFGUARD_BUILD_FUZZERS=OFF -DGGUFGUARD_BUILD_TESTS=OFF \
#     -DCMAKE_PROJECT_INCLUDE=$PWD/bench/static_absl.cmake
#
# Debian's libabsl-dev ships both; its CMake targets name the .so files. The
# re-pointing is deferred to the end of the top-level directory, after
# find_package(absl) has created the targets; IMPORTED_LOCATION is read when
# the build files are generated, so every target that links absl:: gets the
# archives, in the dependency order the targets already declare.
function(_ggufguard_link_absl_statically)
  get_directory_property(imported DIRECTORY ${CMAKE_SOURCE_DIR} IMPORTED_TARGETS)
  foreach(target IN LISTS imported)
    if(NOT target MATCHES "^absl::")
      continue()
    endif()
    get_target_property(configs ${target} IMPORTED_CONFIGURATIONS)
    foreach(config IN LISTS configs)
      get_target_property(location ${target} IMPORTED_LOCATION_${config})
      # Two ifs: ${CMAKE_MATCH_1} would be expanded before the match ran.
      if(location MATCHES "^(.*)\\.so(\\.[0-9.]+)?$")
        set(archive "${CMAKE_MATCH_1}.a")
        if(EXISTS "${archive}")
          set_target_properties(${target} PROPERTIES IMPORTED_LOCATION_${config} "${archive}"
                                                     IMPORTED_NO_SONAME_${config} TRUE)
        endif()
      endif()
    endforeach()
  endforeach()
endfunction()
cmake_language(DEFER DIRECTORY ${CMAKE_SOURCE_DIR} CALL _ggufguard_link_absl_statically)
