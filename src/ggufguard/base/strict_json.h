// The one JSON reader for the files an operator gives the tool: policy
// files, suppressions, baselines. nlohmann::json takes the last of a key
// given twice in one object, so `{"rule":"GG3013", ..., "rule":"GG8003"}`
// would silently mean the second; a file that decides what a gatekeeper
// lets through must say one thing. ParseStrictJson refuses a repeated key
// at any depth, and every error names the line (and column) where it is.
// It also remembers the line where each object or array of the first few
// levels starts, so that the callers' own checks ("suppression #3 has no
// reason") can name the line too.
#ifndef GGUFGUARD_BASE_STRICT_JSON_H_
#define GGUFGUARD_BASE_STRICT_JSON_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace ggufguard {

struct StrictJson {
  nlohmann::json value;
  // The line (from 1, counted in the whole text) where each object or array
  // at depth <= kLinesRecordedDepth starts, by JSON pointer ("" for the
  // document, "/suppressions/2" for the third entry of "suppressions").
  std::map<std::string, uint32_t> lines;
  static constexpr int kLinesRecordedDepth = 3;

  // The line of `pointer`, or 0 when it was not recorded.
  uint32_t LineOf(const std::string& pointer) const {
    auto it = lines.find(pointer);
    return it == lines.end() ? 0 : it->second;
  }
};

// Parses `text` as one JSON document. `origin` names it in errors
// ("policy p.json"), which read "ORIGIN, line L: ...". `first_line` is the
// line number of text's first line (for one line of a JSON-lines file).
// InvalidArgument for text that is not one JSON document, AlreadyExists for
// a key given twice in one object.
absl::StatusOr<StrictJson> ParseStrictJson(std::string_view text, std::string_view origin, uint32_t first_line = 1);

// The string at `key` of object `j`, or `fallback` when the key is absent
// or holds anything but a string. nlohmann's j.value(key, "") throws when
// the key holds another type (`{"type": 23}`), and these documents come
// from outside: an exception there ended the process.
template <typename J>
std::string StringOr(const J& j, const char* key, std::string_view fallback = "") {
  if (!j.is_object()) return std::string(fallback);
  const auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return std::string(fallback);
  return it->template get<std::string>();
}

// "ORIGIN, line L: WHAT" (line 0: "ORIGIN: WHAT"), for the callers' own
// errors about a document ParseStrictJson read.
std::string AtLine(std::string_view origin, uint32_t line, std::string_view what);

}  // namespace ggufguard

#endif  // GGUFGUARD_BASE_STRICT_JSON_H_
