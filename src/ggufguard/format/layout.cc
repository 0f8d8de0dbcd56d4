#include "ggufguard/format/layout.h"

#include <algorithm>
#include <array>
#include <limits>

#include "ggufguard/base/checked_math.h"

namespace ggufguard {

AlignmentReading ReadAlignment(const GgufHeader& header) {
  AlignmentReading out;
  out.kv = header.Find("general.alignment");
  if (out.kv == nullptr) return out;
  if (out.kv->type() != ValueType::kUint32) {
    out.problem = AlignmentReading::Problem::kNotU32;
    return out;
  }
  out.value = *out.kv->value().AsUnsigned();
  if (!IsPowerOfTwo(out.value)) out.problem = AlignmentReading::Problem::kNotPowerOfTwo;
  return out;
}

TensorSizeReading ReadTensorSize(const TensorInfo& t) {
  using Problem = TensorSizeReading::Problem;
  TensorSizeReading out;
  out.type = FindGgmlType(t.ggml_type);
  if (out.type == nullptr) {
    out.problem = Problem::kUnknownTypeId;
    return out;
  }
  if (out.type->status == GgmlTypeStatus::kRemoved) {
    out.problem = Problem::kRetiredType;
    return out;
  }
  const GgmlTypeInfo& type = *out.type;
  const std::array<uint64_t, kMaxDims> dims = t.dims();
  for (uint32_t d = 0; d < t.n_dims; ++d) {
    if (static_cast<int64_t>(dims[d]) < 0) {
      out.problem = Problem::kNegativeDim;
      out.dim = d;
      return out;
    }
  }
  if (dims[0] % type.block_size != 0) {
    out.problem = Problem::kRowNotBlockMultiple;
    return out;
  }
  uint64_t elements = 1;
  uint64_t bytes = dims[0] / type.block_size;
  bool ok = CheckedMul(bytes, type.type_size, &bytes);
  // With a zero dimension the size is 0 and cannot overflow, but ggml's
  // strides (nb[i] = nb[i-1] * ne[i-1]) still multiply the other ones: they
  // must fit too.
  uint64_t strides = std::max<uint64_t>(dims[0] / type.block_size, 1);
  ok = ok && CheckedMul(strides, type.type_size, &strides);
  for (uint32_t d = 0; d < kMaxDims && ok; ++d) {
    ok = CheckedMul(elements, dims[d], &elements);
    if (d > 0 && ok) ok = CheckedMul(bytes, dims[d], &bytes);
    if (d > 0 && ok) ok = CheckedMul(strides, std::max<uint64_t>(dims[d], 1), &strides);
  }
  // ggml stores ne as int64 and the count as int64: both must fit. Its
  // gguf_init_from_file_impl refuses the shape by its own test, which also
  // rejects a count of exactly INT64_MAX: INT64_MAX / ne[1] <= ne[0], then
  // with ne[0]*ne[1] and ne[2], then with ne[0]*ne[1]*ne[2] and ne[3] (each
  // product below INT64_MAX once the previous test passed). From the header
  // alone, whatever the file's size (--header-only --file-size). A zero
  // dimension is GG5012's business (ggml divides by it).
  constexpr uint64_t kInt64Max = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  const bool ggml_refuses = ok && dims[1] != 0 && dims[2] != 0 && dims[3] != 0 &&
                            (kInt64Max / dims[1] <= dims[0] || kInt64Max / dims[2] <= dims[0] * dims[1] ||
                             kInt64Max / dims[3] <= dims[0] * dims[1] * dims[2]);
  if (!ok || ggml_refuses || elements > kInt64Max || bytes > kInt64Max || strides > kInt64Max) {
    out.problem = Problem::kOverflow;
    return out;
  }
  out.bytes = bytes;
  return out;
}

void DeriveLayout(GgufHeader& h) {
  const AlignmentReading alignment = ReadAlignment(h);
  h.alignment = alignment.usable() ? alignment.value : kDefaultAlignment;
  h.data_offset = 0;
  h.data_offset_known = alignment.usable() && CheckedAlignUp(h.infos_end, h.alignment, &h.data_offset);
  // Every tensor's extent, whether they start in file order, and the end of
  // the furthest (the data section's end when every extent is known).
  bool every_extent_known = true;
  bool in_order = true;
  uint64_t last_start = 0, furthest = h.data_offset;
  for (TensorInfo& t : h.tensors) {
    const TensorSizeReading size = ReadTensorSize(t);
    t.size_known = size.problem == TensorSizeReading::Problem::kNone;
    t.byte_size = t.size_known ? size.bytes : 0;
    t.absolute_known = h.data_offset_known && CheckedAdd(h.data_offset, t.relative_offset(), &t.absolute_offset);
    if (!t.absolute_known) t.absolute_offset = 0;
    uint64_t end = 0;
    if (!TensorExtent(t, &end)) {
      every_extent_known = false;
      continue;
    }
    in_order = in_order && t.absolute_offset >= last_start;
    last_start = t.absolute_offset;
    furthest = std::max(furthest, end);
  }
  h.data_end_known = h.data_offset_known && every_extent_known;
  h.data_end = 0;
  if (h.data_end_known && !CheckedAlignUp(furthest, h.alignment, &h.data_end)) h.data_end = furthest;
  h.extents_in_file_order = in_order;
  h.extents_by_start.clear();
  if (in_order) return;
  // Out of order (a crafted file, or a writer that does not sort): the
  // indices by start, ties in file order, sorted once here for every
  // reader. Bounded by the tensor count, which the parser bounded by the
  // header's bytes.
  for (size_t i = 0; i < h.tensors.size(); ++i) {
    uint64_t end;
    if (TensorExtent(h.tensors[i], &end)) h.extents_by_start.push_back(static_cast<uint32_t>(i));
  }
  std::sort(h.extents_by_start.begin(), h.extents_by_start.end(), [&](uint32_t a, uint32_t b) {
    const uint64_t sa = h.tensors[a].absolute_offset, sb = h.tensors[b].absolute_offset;
    return sa != sb ? sa < sb : a < b;
  });
}

}  // namespace ggufguard
