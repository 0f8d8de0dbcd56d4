#include "ggufguard/read/prefix_reader.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "ggufguard/base/checked_math.h"

namespace ggufguard {

PrefixReader::PrefixReader(PageBuffer& buffer, size_t& length, ByteSource* source, ByteStream* stream,
                           uint64_t max_bytes, std::optional<uint64_t> file_size)
    : buffer_(buffer), length_(length), source_(source), stream_(stream), max_bytes_(max_bytes), file_size_(file_size) {
  if (source_ != nullptr) size_ = source_->size();
}

absl::Status PrefixReader::Read(const Policy& policy, const SourceOptions& options, StringArrayScreen* screen,
                                ParseResult* parsed, std::optional<FindingSink>* sink) {
  const uint64_t max_header = policy.limits.max_header_bytes;
  uint64_t want = std::max<uint64_t>(options.first_prefix, 1);
  for (;;) {
    // The last prefix's parse is dropped first: its view (a record per
    // tensor info and KV) points into the buffer that Ensure may replace,
    // and must not be alive beside the old buffer, the new one and the
    // new parse.
    *parsed = ParseResult{};
    absl::Status read = Ensure(want);
    if (!read.ok()) return read;
    sink->emplace(policy);
    // A stream that is a prefix of a larger file (file_size_) is never
    // the whole file: running out of it is not the file's truncation.
    const bool complete = size_.has_value() && length() == *size_ && (!file_size_ || *file_size_ == *size_);
    *parsed = ParseHeader(absl::MakeConstSpan(buffer_.data(), length_), ParseOptions{policy.limits, complete, screen},
                          **sink);
    if (parsed->status != ParseStatus::kNeedMoreBytes) return absl::OkStatus();
    const uint64_t needed = parsed->bytes_needed;
    if (stream_ != nullptr && file_size_ && size_.has_value() && !complete) {
      return absl::OutOfRangeError(absl::StrCat("the stream ended after ", *size_,
                                                " bytes, inside the header, which needs at least ", needed,
                                                " (the file has ", *file_size_, " by --file-size): read a longer prefix"));
    }
    if (size_.has_value() && needed > *size_) {
      // The file is too short: parse it whole for the truncation finding,
      // as long as holding it whole stays within the header limit.
      if (*size_ <= max_header) {
        want = *size_;
        continue;
      }
    } else if (needed <= max_header) {
      // Grow x`growth`, or to where the parser expects the header to end
      // when that is further, by at most max_overshoot past what was
      // asked for.
      const uint64_t grown = std::min(std::max(SatMul(want, std::max<uint64_t>(options.growth, 2)),
                                               parsed->bytes_expected),
                                      SatAdd(needed, options.max_overshoot));
      want = std::min(std::max(needed, grown), max_header);
      continue;
    } else if (!size_.has_value() && length() <= max_header) {
      // A stream's size is unknown: read on, up to the limit, to tell a
      // header beyond the limit from a file that ends first (which a
      // path's size tells at once).
      want = SatAdd(max_header, 1);
      continue;
    }
    (*sink)->Add(RuleId::kHeaderSizeLimit, 0,
                 absl::StrCat("header of at least ", needed, " bytes exceeds the limit of ", max_header));
    parsed->status = ParseStatus::kFailed;
    return absl::OkStatus();
  }
}

// Makes the prefix hold the input's first `want` bytes, or all of them
// when it is shorter. A stream's buffer grows at most x2 past the bytes it
// has received: no count from the file sizes an allocation before the
// bytes are there.
absl::Status PrefixReader::Ensure(uint64_t want) {
  if (source_ != nullptr) {
    const uint64_t target = std::min(want, *size_);
    if (target <= length()) return absl::OkStatus();
    Grow(target);
    absl::Status s = source_->ReadAt(length(), absl::MakeSpan(buffer_.data() + length(), target - length()));
    if (!s.ok()) return s;
    length_ = target;
    return absl::OkStatus();
  }
  constexpr uint64_t kFirstStreamBuffer = uint64_t{64} << 10;
  // A stream is never buffered past its budget (--max-bytes): a header
  // that needs more cannot be judged (an I/O error); one that fits is,
  // and the data's reader finds out whether the stream goes on.
  if (want > length() && length() >= max_bytes_ && !size_.has_value()) {
    // The budget is spent and the parser wants more. A stream that ends
    // here is the whole file (its parse then finds it truncated); one that
    // goes on holds a header the budget cannot judge.
    uint8_t probe;
    absl::StatusOr<size_t> got = stream_->Read(absl::MakeSpan(&probe, 1));
    if (!got.ok()) return got.status();
    if (*got != 0) return TooLong(max_bytes_);
    size_ = length();
    return absl::OkStatus();
  }
  want = std::min(want, max_bytes_);
  while (length() < want && !size_.has_value()) {
    if (length() == buffer_.size()) Grow(std::min(want, std::max(SatMul(length(), 2), kFirstStreamBuffer)));
    const size_t room = static_cast<size_t>(std::min<uint64_t>(want, buffer_.size()) - length());
    absl::StatusOr<size_t> got = stream_->Read(absl::MakeSpan(buffer_.data() + length(), room));
    if (!got.ok()) return got.status();
    if (*got == 0) {
      size_ = length();
      break;
    }
    length_ += *got;
    if (file_size_ && length() > *file_size_) {
      return absl::InvalidArgumentError(
          absl::StrCat("the stream holds more than the ", *file_size_, " bytes that --file-size gives the file"));
    }
  }
  return absl::OkStatus();
}

void PrefixReader::Grow(uint64_t capacity) {
  PageBuffer grown = PageBuffer::Uninitialised(static_cast<size_t>(capacity));
  if (length() > 0) std::memcpy(grown.data(), buffer_.data(), length());
  buffer_ = std::move(grown);
}

absl::Status PrefixReader::TooLong(uint64_t max_bytes) {
  return absl::ResourceExhaustedError(
      absl::StrCat("the stream is longer than the limit of ", max_bytes, " bytes (--max-bytes)"));
}

}  // namespace ggufguard
