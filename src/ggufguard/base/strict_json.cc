#include "ggufguard/base/strict_json.h"

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ggufguard/base/sv.h"

namespace ggufguard {
namespace {

using Json = nlohmann::json;

// A pointer into the text that records how far nlohmann's lexer has read:
// at each parser event the lexer has just read the token the event is
// about (a '{', a key's closing quote), so the line of that point is the
// event's line. Only forward steps exist, so the furthest point is the
// current one.
class TrackedIterator {
 public:
  using iterator_category = std::forward_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;

  TrackedIterator(const char* at, const char** furthest) : at_(at), furthest_(furthest) {}
  reference operator*() const { return *at_; }
  TrackedIterator& operator++() {
    *furthest_ = ++at_;
    return *this;
  }
  TrackedIterator operator++(int) {
    TrackedIterator before = *this;
    ++*this;
    return before;
  }
  bool operator==(const TrackedIterator& o) const { return at_ == o.at_; }
  bool operator!=(const TrackedIterator& o) const { return at_ != o.at_; }

 private:
  const char* at_;
  const char** furthest_;
};

// Lines of points that only move forward, counted once each.
class LineCounter {
 public:
  LineCounter(std::string_view text, uint32_t first_line) : text_(text), line_(first_line) {}
  uint32_t LineAt(size_t offset) {
    offset = std::min(offset, text_.size());
    for (; counted_ < offset; ++counted_) line_ += text_[counted_] == '\n';
    return line_;
  }

 private:
  std::string_view text_;
  size_t counted_ = 0;
  uint32_t line_;
};

// RFC 6901: '~' and '/' inside a key.
std::string PointerToken(std::string_view key) {
  std::string out;
  for (char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

struct Frame {
  bool array = false;
  size_t index = 0;          // an array's next element
  std::string key;           // an object's current key
  std::set<std::string> keys;  // an object's keys so far
  std::string pointer;
};

}  // namespace

std::string AtLine(std::string_view origin, uint32_t line, std::string_view what) {
  return line == 0 ? absl::StrCat(Sv(origin), ": ", Sv(what)) : absl::StrCat(Sv(origin), ", line ", line, ": ", Sv(what));
}

// "ORIGIN, line L: column C: not valid JSON (WHY)" for the byte at `at`.
std::string NotJsonAt(std::string_view text, std::string_view origin, uint32_t first_line, size_t at,
                      std::string_view why) {
  const uint32_t line = LineCounter(text, first_line).LineAt(at);
  const size_t line_start = at == 0 ? 0 : text.rfind('\n', at - 1) + 1;  // npos + 1 is 0
  return AtLine(origin, line, absl::StrCat("column ", at - line_start + 1, ": not valid JSON (", Sv(why), ")"));
}

absl::StatusOr<StrictJson> ParseStrictJson(std::string_view text, std::string_view origin, uint32_t first_line) {
  StrictJson out;
  const char* furthest = text.data();
  LineCounter lines(text, first_line);
  auto line_now = [&] { return lines.LineAt(static_cast<size_t>(furthest - text.data())); };
  std::vector<Frame> stack;
  std::string repeated;  // the first key given twice, with its line
  uint32_t repeated_line = 0;

  auto element_done = [&] {
    if (!stack.empty() && stack.back().array) ++stack.back().index;
  };
  auto callback = [&](int, Json::parse_event_t event, Json& parsed) {
    switch (event) {
      case Json::parse_event_t::object_start:
      case Json::parse_event_t::array_start: {
        Frame f;
        f.array = event == Json::parse_event_t::array_start;
        if (!stack.empty()) {
          const Frame& parent = stack.back();
          f.pointer = absl::StrCat(parent.pointer, "/",
                                   parent.array ? absl::StrCat(parent.index) : PointerToken(parent.key));
        }
        if (stack.size() <= static_cast<size_t>(StrictJson::kLinesRecordedDepth)) out.lines[f.pointer] = line_now();
        stack.push_back(std::move(f));
        break;
      }
      case Json::parse_event_t::key: {
        if (stack.empty()) break;  // cannot happen: a key is inside an object
        Frame& f = stack.back();
        f.key = parsed.get<std::string>();
        if (!f.keys.insert(f.key).second && repeated_line == 0) {
          repeated = absl::StrCat(f.pointer, "/", PointerToken(f.key));
          repeated_line = line_now();
        }
        break;
      }
      case Json::parse_event_t::object_end:
      case Json::parse_event_t::array_end:
        if (!stack.empty()) stack.pop_back();
        element_done();
        break;
      case Json::parse_event_t::value:
        element_done();
        break;
    }
    return true;
  };
  try {
    out.value = Json::parse(TrackedIterator(text.data(), &furthest),
                            TrackedIterator(text.data() + text.size(), &furthest), callback);
  } catch (const Json::parse_error& e) {
    // e.byte counts from 1 to the byte at which the lexer gave up.
    const size_t at = std::min(text.size(), e.byte == 0 ? size_t{0} : static_cast<size_t>(e.byte - 1));
    return absl::InvalidArgumentError(NotJsonAt(text, origin, first_line, at, e.what()));
  } catch (const Json::exception& e) {
    // Any other refusal (a number too large for a double, "1e400") carries no
    // position; the furthest byte the lexer had read is where it gave up.
    const size_t read = static_cast<size_t>(furthest - text.data());
    const size_t at = read == 0 ? 0 : std::min(text.size(), read) - 1;
    return absl::InvalidArgumentError(NotJsonAt(text, origin, first_line, at, e.what()));
  }
  if (repeated_line != 0) {
    return absl::AlreadyExistsError(
        AtLine(origin, repeated_line,
               absl::StrCat("the key ", repeated, " is given twice (a JSON reader takes the last one; say it once)")));
  }
  return out;
}

}  // namespace ggufguard
