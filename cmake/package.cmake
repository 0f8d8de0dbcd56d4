# What a loader adopts (docs/library.md): the shared C library, the static
# archive, the headers, a CMake package and a pkg-config file, and the
# Python module. Included from the top-level CMakeLists.txt after the
# `ggufguard` library target exists.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# Sanitized and fuzzing builds are for this repository's own tests: a
# sanitized .so or Python module could not be loaded without the sanitizer
# runtime preloaded, so they build neither.
set(_ggufguard_instrumented OFF)
if(GGUFGUARD_SANITIZE OR GGUFGUARD_LIBFUZZER OR GGUFGUARD_LIB_FUZZING_ENGINE)
  set(_ggufguard_instrumented ON)
endif()
if(_ggufguard_instrumented)
  set(_ggufguard_shared_default OFF)
else()
  set(_ggufguard_shared_default ON)
endif()
option(GGUFGUARD_BUILD_SHARED "Build libggufguard.so (the C API) and the install rules" ${_ggufguard_shared_default})

# The C API is compiled into `ggufguard` (tests, fuzzers and the static
# archive use it from there); every object is position-independent so that
# the archive can also be linked into a shared library or a Python module,
# and hidden unless marked GGUFGUARD_API, so that nothing else is exported.
set_target_properties(ggufguard PROPERTIES
  POSITION_INDEPENDENT_CODE ON
  CXX_VISIBILITY_PRESET hidden
  VISIBILITY_INLINES_HIDDEN ON
  EXPORT_NAME ggufguard_static)
target_compile_definitions(ggufguard PRIVATE GGUFGUARD_BUILDING_LIBRARY
  GGUFGUARD_VERSION_STRING="${PROJECT_VERSION}")
target_include_directories(ggufguard PUBLIC
  $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
# An installed static archive's consumer links nettle itself (its private
# dependency; the build tree's imported target does not travel).
target_link_libraries(ggufguard INTERFACE $<INSTALL_INTERFACE:nettle>)

set(GGUFGUARD_EXPORT_MAP ${PROJECT_SOURCE_DIR}/src/ggufguard/capi/ggufguard.map)

# Links the library's archive into a shared object (the C library, the
# Python module). Debian's Abseil archives are built position-dependent
# (PIE: cordz_functions.o has a local-exec TLS relocation, which no shared
# object may hold), so where GGUFGUARD_STATIC_ABSL re-pointed the absl::
# targets at them, a shared object links Abseil's .so files instead: the
# archive's file, plus the .so beside each archive, as needed.
function(ggufguard_link_into_shared_object target)
  target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/include)
  set(absl_shared "")
  get_directory_property(imported_targets DIRECTORY ${PROJECT_SOURCE_DIR} IMPORTED_TARGETS)
  foreach(imported IN LISTS imported_targets)
    if(NOT imported MATCHES "^absl::")
      continue()
    endif()
    get_target_property(configs ${imported} IMPORTED_CONFIGURATIONS)
    foreach(config IN LISTS configs)
      get_target_property(location ${imported} IMPORTED_LOCATION_${config})
      if(location MATCHES "^(.*)\\.a$")
        set(shared "${CMAKE_MATCH_1}.so")
        if(EXISTS "${shared}")
          list(APPEND absl_shared "${shared}")
        endif()
      endif()
    endforeach()
  endforeach()
  if(absl_shared)
    list(REMOVE_DUPLICATES absl_shared)
    add_dependencies(${target} ggufguard)
    target_link_libraries(${target} PRIVATE $<TARGET_FILE:ggufguard> -Wl,--as-needed ${absl_shared}
      ${NETTLE_LIBRARY} Threads::Threads)
  else()
    target_link_libraries(${target} PRIVATE ggufguard)
  endif()
endfunction()

if(GGUFGUARD_BUILD_SHARED)
  # The C API's two files are compiled again here, so that the shared
  # library defines every exported symbol itself; the rest comes from the
  # archive, pulled in as the C API needs it.
  add_library(ggufguard_shared SHARED src/ggufguard/capi/capi.cc src/ggufguard/capi/mapping.cc)
  target_compile_definitions(ggufguard_shared PRIVATE GGUFGUARD_BUILDING_LIBRARY
    GGUFGUARD_VERSION_STRING="${PROJECT_VERSION}")
  ggufguard_link_into_shared_object(ggufguard_shared)
  target_include_directories(ggufguard_shared INTERFACE
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  set_target_properties(ggufguard_shared PROPERTIES
    OUTPUT_NAME ggufguard
    EXPORT_NAME ggufguard
    VERSION ${PROJECT_VERSION}
    SOVERSION ${PROJECT_VERSION_MAJOR}
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON
    LINK_DEPENDS ${GGUFGUARD_EXPORT_MAP})
  # nettle's archive (position-independent in Debian) is linked in:
  # --exclude-libs hides its symbols and those of every other archive, the
  # version script everything but the C API, --no-undefined makes a missing
  # dependency a link error here rather than a load error in a user's program.
  target_link_options(ggufguard_shared PRIVATE
    -Wl,--exclude-libs,ALL
    -Wl,--version-script=${GGUFGUARD_EXPORT_MAP}
    -Wl,--no-undefined)

  install(TARGETS ggufguard_shared EXPORT ggufguardTargets
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
    INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  install(TARGETS ggufguard EXPORT ggufguardStaticTargets
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(TARGETS ggufguard_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  install(FILES include/ggufguard/ggufguard.h include/ggufguard/ggufguard.hpp
    DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/ggufguard)

  set(_ggufguard_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/ggufguard)
  install(EXPORT ggufguardTargets NAMESPACE ggufguard:: DESTINATION ${_ggufguard_cmake_dir})
  install(EXPORT ggufguardStaticTargets NAMESPACE ggufguard:: DESTINATION ${_ggufguard_cmake_dir})
  configure_package_config_file(cmake/ggufguardConfig.cmake.in
    ${CMAKE_CURRENT_BINARY_DIR}/ggufguardConfig.cmake INSTALL_DESTINATION ${_ggufguard_cmake_dir})
  # 0.x: a minor release may change the API (docs/library.md).
  write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/ggufguardConfigVersion.cmake
    COMPATIBILITY SameMinorVersion)
  install(FILES ${CMAKE_CURRENT_BINARY_DIR}/ggufguardConfig.cmake
    ${CMAKE_CURRENT_BINARY_DIR}/ggufguardConfigVersion.cmake DESTINATION ${_ggufguard_cmake_dir})
  configure_file(cmake/ggufguard.pc.in ${CMAKE_CURRENT_BINARY_DIR}/ggufguard.pc @ONLY)
  install(FILES ${CMAKE_CURRENT_BINARY_DIR}/ggufguard.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endif()

# The Python module, for the interpreter pybind11 is told about: Debian's
# /usr/bin/python3 unless PYTHON_EXECUTABLE says otherwise (a PATH may put
# another python3 first, whose ABI would not match).
if(NOT _ggufguard_instrumented)
  if(NOT DEFINED PYTHON_EXECUTABLE AND EXISTS /usr/bin/python3)
    set(PYTHON_EXECUTABLE /usr/bin/python3 CACHE FILEPATH "The Python the ggufguard module is built for")
  endif()
  find_package(pybind11 CONFIG QUIET)
endif()
if(pybind11_FOUND)
  set(_ggufguard_python_default ON)
else()
  set(_ggufguard_python_default OFF)
endif()
option(GGUFGUARD_BUILD_PYTHON "Build the ggufguard Python module (pybind11)" ${_ggufguard_python_default})
if(GGUFGUARD_BUILD_PYTHON)
  if(NOT pybind11_FOUND)
    message(FATAL_ERROR "GGUFGUARD_BUILD_PYTHON needs pybind11 (Debian: pybind11-dev python3-dev)")
  endif()
  pybind11_add_module(ggufguard_python MODULE python/ggufguard_module.cc)
  ggufguard_link_into_shared_object(ggufguard_python)
  target_link_options(ggufguard_python PRIVATE -Wl,--exclude-libs,ALL)
  set_target_properties(ggufguard_python PROPERTIES OUTPUT_NAME ggufguard
    LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/python)
  set(GGUFGUARD_PYTHON_INSTALL_DIR lib/python3/dist-packages CACHE STRING
      "Where the Python module is installed, under the prefix (Debian's python3 looks in /usr/lib/python3/dist-packages)")
  install(TARGETS ggufguard_python LIBRARY DESTINATION ${GGUFGUARD_PYTHON_INSTALL_DIR})
endif()
