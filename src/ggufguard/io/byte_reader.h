// A cursor over borrowed bytes that cannot read out of bounds.
//
// The position is an index into a span whose length is known in advance, so
// "bytes remaining" is one subtraction, never a query to the operating system
// (the cost that makes stream-based parsers slow, see docs/design.md). Every
// read is checked against remaining() before memory is touched; a failed read
// returns false and leaves the position unchanged, so the caller can report
// exactly where the file ran out.
#ifndef GGUFGUARD_IO_BYTE_READER_H_
#define GGUFGUARD_IO_BYTE_READER_H_

#include <cstdint>
#include <cstring>

#include "absl/types/span.h"

namespace ggufguard {

enum class ByteOrder : uint8_t { kLittle, kBig };

// Loads an unsigned integer of sizeof(T) bytes from p in the given order.
// p must point at sizeof(T) readable bytes; ByteReader proves that first.
template <typename T>
inline T LoadUnsigned(const uint8_t* p, ByteOrder order) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  if (order == ByteOrder::kBig) {
    if constexpr (sizeof(T) == 2) v = __builtin_bswap16(v);
    if constexpr (sizeof(T) == 4) v = __builtin_bswap32(v);
    if constexpr (sizeof(T) == 8) v = __builtin_bswap64(v);
  }
  return v;
}

class ByteReader {
 public:
  ByteReader(absl::Span<const uint8_t> bytes, ByteOrder order) : bytes_(bytes), order_(order) {}

  uint64_t position() const { return pos_; }
  uint64_t size() const { return bytes_.size(); }
  uint64_t remaining() const { return bytes_.size() - pos_; }
  ByteOrder order() const { return order_; }
  void set_order(ByteOrder order) { order_ = order; }
  bool CanRead(uint64_t n) const { return n <= remaining(); }
  absl::Span<const uint8_t> Span() const { return bytes_; }

  [[nodiscard]] bool ReadU8(uint8_t* out) { return ReadScalar(out); }
  [[nodiscard]] bool ReadU16(uint16_t* out) { return ReadScalar(out); }
  [[nodiscard]] bool ReadU32(uint32_t* out) { return ReadScalar(out); }
  [[nodiscard]] bool ReadU64(uint64_t* out) { return ReadScalar(out); }

  // Borrows the next n bytes without copying them.
  [[nodiscard]] bool ReadBytes(uint64_t n, absl::Span<const uint8_t>* out) {
    if (!CanRead(n)) return false;
    *out = bytes_.subspan(pos_, n);
    pos_ += n;
    return true;
  }

  [[nodiscard]] bool Skip(uint64_t n) {
    if (!CanRead(n)) return false;
    pos_ += n;
    return true;
  }

 private:
  template <typename T>
  bool ReadScalar(T* out) {
    if (!CanRead(sizeof(T))) return false;
    *out = LoadUnsigned<T>(bytes_.data() + pos_, order_);
    pos_ += sizeof(T);
    return true;
  }

  absl::Span<const uint8_t> bytes_;
  uint64_t pos_ = 0;  // invariant: pos_ <= bytes_.size()
  ByteOrder order_;
};

}  // namespace ggufguard

#endif  // GGUFGUARD_IO_BYTE_READER_H_
