// Where a parsed header says its data lies: the effective alignment, the
// data section's offset and end, each tensor's byte size and absolute
// offset, and the order in which the tensors' data lies.
//
// Derived once, by the parser, when a header parses (ParseHeader calls
// DeriveLayout), with checked arithmetic throughout; a fact that cannot be
// computed without overflow, or from a value a loader would refuse, is
// marked unknown rather than guessed. The rules only read these facts, and
// report why one is unknown through the readings below, so that the
// arithmetic exists in one place.
#ifndef GGUFGUARD_FORMAT_LAYOUT_H_
#define GGUFGUARD_FORMAT_LAYOUT_H_

#include <cstdint>

#include "ggufguard/base/checked_math.h"
#include "ggufguard/format/ggml_type.h"
#include "ggufguard/format/header.h"

namespace ggufguard {

// general.alignment as loaders read it.
struct AlignmentReading {
  enum class Problem {
    kNone,           // absent (32) or a usable u32
    kNotU32,         // ggml refuses the file; candle silently uses 32
    kNotPowerOfTwo,  // 0 or not a power of two
  };
  const KeyValue* kv = nullptr;  // general.alignment, or nullptr when absent
  Problem problem = Problem::kNone;
  uint64_t value = kDefaultAlignment;  // the u32 as written (when kv is a u32), else 32
  // Whether data offsets can be computed at all: not with an alignment that
  // a loader refuses, where every offset would be a guess.
  bool usable() const { return problem == Problem::kNone; }
};
AlignmentReading ReadAlignment(const GgufHeader& header);

// One tensor's byte size as ggml computes it, but dividing by the block size
// before multiplying (ggml_nbytes multiplies first and can wrap, #27200).
struct TensorSizeReading {
  enum class Problem {
    kNone,
    kUnknownTypeId,        // a type id outside the table
    kRetiredType,          // an id ggml retired (block size 0)
    kNegativeDim,          // a dimension negative as int64 (`dim` says which)
    kRowNotBlockMultiple,  // ne[0] not a multiple of the type's block size
    kOverflow,             // elements, bytes or strides past INT64_MAX, or ggml's own shape test refuses it
  };
  Problem problem = Problem::kNone;
  const GgmlTypeInfo* type = nullptr;  // set unless kUnknownTypeId
  uint32_t dim = 0;                    // kNegativeDim: the first negative dimension
  uint64_t bytes = 0;                  // valid only when problem == kNone
};
TensorSizeReading ReadTensorSize(const TensorInfo& tensor);

// Where a tensor's data ends, when its extent is known: its size and
// absolute offset known and their sum free of overflow.
inline bool TensorExtent(const TensorInfo& t, uint64_t* end) {
  return t.size_known && t.absolute_known && CheckedAdd(t.absolute_offset, t.byte_size, end);
}

// Calls visit(index) for every tensor whose extent is known, by where its
// data starts, ties in file order: the order the layout rules, the stream's
// zero map and --deep walk the data section in. visit returns false to stop.
template <typename Visit>
void ForEachExtentByStart(const GgufHeader& h, Visit&& visit) {
  if (!h.extents_in_file_order) {
    for (const uint32_t i : h.extents_by_start) {
      if (!visit(i)) return;
    }
    return;
  }
  for (size_t i = 0; i < h.tensors.size(); ++i) {
    uint64_t end;
    if (TensorExtent(h.tensors[i], &end) && !visit(static_cast<uint32_t>(i))) return;
  }
}

// Fills the layout fields of `header` (alignment, data_offset(_known),
// data_end(_known), the extents' order) and every tensor's
// byte_size/size_known and absolute_offset/absolute_known from the readings
// above. Needs a header parsed to the end of its tensor infos.
void DeriveLayout(GgufHeader& header);

}  // namespace ggufguard

#endif  // GGUFGUARD_FORMAT_LAYOUT_H_
