// Turns bytes into a GgufHeader view, checking every length against the bytes
// that remain before it is used.
//
// The parser does no I/O and never allocates from a count before proving that
// `count * minimum encoded size <= remaining`. It records only the problems
// that stop parsing (bad magic, unknown type ids, limits, truncation) and a few
// facts of the header (version 1, big-endian, nested arrays); every other check
// is a rule over the finished view.
#ifndef GGUFGUARD_PARSE_PARSER_H_
#define GGUFGUARD_PARSE_PARSER_H_

#include <cstdint>
#include <optional>
#include <string_view>

#include "absl/types/span.h"
#include "ggufguard/base/hash_screen.h"
#include "ggufguard/format/header.h"
#include "ggufguard/findings/finding.h"
#include "ggufguard/findings/policy.h"

namespace ggufguard {

class Parser;

// What the parser learns of one string array (the vocabulary's tokens) in
// the walk that proves its strings' lengths, for GG9054 (duplicate
// tokens): each string's TextHash (base/text_hash.h) filed straight into a
// duplicate screen (base/hash_screen.h), and whether some string holds a 0
// byte (one vectorised count over the array once the walk is done). The
// walk is a chain of dependent loads with issue slots to spare: a second
// walk to hash cost more (docs/performance.md, "Cost of each rule"). The
// parser fills it for the first KV whose key, read as a C
// string, is key(): the KV that gguf_find_key and KeyIndex::Find resolve.
// The hashes are of the whole strings, NULs included.
class StringArrayScreen {
 public:
  explicit StringArrayScreen(std::string_view key) : key_(key) {}
  StringArrayScreen(const StringArrayScreen&) = delete;
  StringArrayScreen& operator=(const StringArrayScreen&) = delete;

  std::string_view key() const { return key_; }
  // The index in GgufHeader::kvs of the array the last parse screened, or
  // nullopt when it found no such string array.
  std::optional<uint32_t> kv_index() const { return kv_index_; }
  // How many strings were screened: the array's count.
  uint64_t count() const { return count_; }
  // Whether some string of the array holds a 0 byte.
  bool any_zero_byte() const { return zero_ != 0; }
  // The screen of the strings' hashes (HashScreen::MayRepeat); only when
  // kv_index() is set.
  const HashScreen& screen() const { return *screen_; }

 private:
  friend class Parser;
  std::string_view key_;
  std::optional<HashScreen> screen_;  // its memory kept by the thread for its next parse
  std::optional<uint32_t> kv_index_;
  uint64_t count_ = 0;
  uint64_t zero_ = 0;
};

struct ParseOptions {
  Limits limits;
  // True when `bytes` is the whole file. False when it is a prefix: running
  // out of bytes then yields kNeedMoreBytes rather than a truncation finding,
  // so a source can read more and parse again.
  bool complete = true;
  // When set, filled as its comment says (and emptied first).
  StringArrayScreen* screen = nullptr;
};

enum class ParseStatus {
  kOk,             // the header up to the end of the tensor infos was parsed
  kNeedMoreBytes,  // prefix too short: see bytes_needed
  kFailed,         // a fatal finding was recorded; header is partial
};

struct ParseResult {
  ParseStatus status = ParseStatus::kFailed;
  // kNeedMoreBytes: the prefix must hold at least this many bytes (from the
  // start of the file) before parsing can get further. UINT64_MAX when no
  // file could be large enough.
  uint64_t bytes_needed = 0;
  // kNeedMoreBytes: a guess at the whole header's size, at least
  // bytes_needed, from the average size of the KVs and tensor infos parsed
  // so far, so that a source reads the rest at once instead of parsing
  // ever larger prefixes (a million KVs were parsed 1.7 times over).
  uint64_t bytes_expected = 0;
  GgufHeader header;
};

// Minimum encoded sizes, used to bound counts before allocating.
inline constexpr uint64_t kMinKvSize(uint32_t version) { return version == 1 ? 4 + 4 + 1 : 8 + 4 + 1; }
inline constexpr uint64_t kMinTensorInfoSize(uint32_t version) { return version == 1 ? 4 + 4 + 4 + 8 : 8 + 4 + 4 + 8; }

ParseResult ParseHeader(absl::Span<const uint8_t> bytes, const ParseOptions& options, FindingSink& sink);

}  // namespace ggufguard

#endif  // GGUFGUARD_PARSE_PARSER_H_
