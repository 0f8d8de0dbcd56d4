// The tool's version. Its one source is project(VERSION) in CMakeLists.txt:
// the build passes it as GGUFGUARD_VERSION_STRING, and checks there that the
// C header's GGUFGUARD_VERSION_MAJOR/MINOR/PATCH say the same.
#ifndef GGUFGUARD_BASE_VERSION_H_
#define GGUFGUARD_BASE_VERSION_H_

#include <string_view>

#ifndef GGUFGUARD_VERSION_STRING
#error "GGUFGUARD_VERSION_STRING comes from CMakeLists.txt's project(VERSION); build through CMake"
#endif

namespace ggufguard {

inline constexpr std::string_view kToolVersion = GGUFGUARD_VERSION_STRING;

}  // namespace ggufguard

#endif  // GGUFGUARD_BASE_VERSION_H_
