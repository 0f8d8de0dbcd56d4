// Debian's abseil (20220623) is built with its own absl::string_view rather
// than std::string_view, so StrCat cannot take a std::string_view directly.
// Sv() adapts one without copying.
#ifndef GGUFGUARD_BASE_SV_H_
#define GGUFGUARD_BASE_SV_H_

#include <string_view>

#include "absl/strings/string_view.h"

namespace ggufguard {

inline absl::string_view Sv(std::string_view s) { return absl::string_view(s.data(), s.size()); }

}  // namespace ggufguard

#endif  // GGUFGUARD_BASE_SV_H_
