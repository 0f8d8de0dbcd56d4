# The benchmark input library (SmolLM2-like GGUF files built with the test
# writer). Included from bench/CMakeLists.txt and from tests/CMakeLists.txt
# (the system-call budget test builds the same files in memory), so it is
# defined once whichever of the two is enabled.
include_guard(GLOBAL)

if(NOT TARGET ggufguard_testsupport)
  # Tests disabled (the release preset): the writer is still needed here.
  add_library(ggufguard_testsupport STATIC ${PROJECT_SOURCE_DIR}/tests/support/gguf_writer.cc)
  target_include_directories(ggufguard_testsupport PUBLIC ${PROJECT_SOURCE_DIR})
  target_link_libraries(ggufguard_testsupport PUBLIC absl::strings absl::status absl::span)
endif()

add_library(ggufguard_benchinputs STATIC ${PROJECT_SOURCE_DIR}/bench/bench_inputs.cc)
target_include_directories(ggufguard_benchinputs PUBLIC ${PROJECT_SOURCE_DIR})
target_link_libraries(ggufguard_benchinputs PUBLIC ggufguard_testsupport absl::strings absl::status)
# Lets a consumer tell at compile time that the library is linked in.
target_compile_definitions(ggufguard_benchinputs INTERFACE GGUFGUARD_HAVE_BENCH_INPUTS=1)

# The hostile headers (bench/hostile_inputs.h): bench/make_hostile_inputs and
# the bounded-report tests build them.
add_library(ggufguard_hostileinputs STATIC ${PROJECT_SOURCE_DIR}/bench/hostile_inputs.cc)
target_include_directories(ggufguard_hostileinputs PUBLIC ${PROJECT_SOURCE_DIR})
target_link_libraries(ggufguard_hostileinputs PUBLIC ggufguard_testsupport absl::strings absl::str_format)
