// 4xxx general.alignment and 5xxx tensor infos.
#include <algorithm>
#include <cstring>
#include <limits>
#include <string>

#include "absl/strings/str_cat.h"
#include "ggufguard/base/sv.h"
#include "ggufguard/base/checked_math.h"
#include "ggufguard/base/text.h"
#include "ggufguard/format/ggml_type.h"
#include "ggufguard/rules/key_groups.h"
#include "ggufguard/rules/rules.h"

namespace ggufguard {

void CheckAlignment(RuleContext& ctx) {
  GgufHeader& h = ctx.header;
  const KeyValue* kv = h.Find("general.alignment");
  h.alignment = kDefaultAlignment;
  bool usable = true;
  if (kv != nullptr) {
    if (kv->type() != ValueType::kUint32) {
      ctx.sink.Add(RuleId::kAlignmentType, kv->type_offset(),
                   absl::StrCat("general.alignment is ", Sv(ValueTypeName(kv->type())),
                                "; loaders require u32 (ggml rejects the file, candle silently uses 32)"));
      usable = false;
    } else {
      uint64_t a = *kv->value().AsUnsigned();
      if (!IsPowerOfTwo(a)) {
        ctx.sink.Add(RuleId::kAlignmentNotPowerOfTwo, kv->value().offset,
                     absl::StrCat("general.alignment ", a, " is not a power of two",
                                  a == 0 ? " (0 divides by zero in candle and gguf-parser-go)" : ""));
        usable = false;
      } else {
        if (a < ctx.policy.limits.min_alignment || a > ctx.policy.limits.max_alignment) {
          ctx.sink.Add(RuleId::kAlignmentOutOfRange, kv->value().offset,
                       absl::StrCat("general.alignment ", a, " is outside the policy bounds [",
                                    ctx.policy.limits.min_alignment, ", ", ctx.policy.limits.max_alignment, "]"));
        }
        h.alignment = a;
      }
    }
  }
  // Without a usable alignment every data offset would be a guess: the
  // layout rules stay silent rather than report noise.
  h.data_offset_known = usable && CheckedAlignUp(h.infos_end, h.alignment, &h.data_offset);
}

namespace {

void CheckTensorName(const TensorInfo& t, RuleContext& ctx) {
  if (t.name.empty()) {
    ctx.sink.Add(RuleId::kEmptyTensorName, t.offset, "tensor with an empty name");
    return;
  }
  if (t.name.size() > ctx.policy.limits.max_tensor_name_length) {
    ctx.sink.Add(RuleId::kTensorNameTooLong, t.offset,
                 absl::StrCat("tensor name '", EscapeForDisplay(t.name), "' is ", t.name.size(),
                              " bytes; ggml allows at most ", ctx.policy.limits.max_tensor_name_length));
  }
  size_t bad = FindInvalidUtf8(t.name);
  if (bad != kValidUtf8) {
    ctx.sink.Add(RuleId::kTensorNameEncoding, t.name_offset() + bad,
                 absl::StrCat("tensor name '", EscapeForDisplay(t.name), "' is not valid UTF-8 at byte ", bad));
    return;
  }
  for (size_t i = 0; i < t.name.size(); ++i) {
    auto c = static_cast<uint8_t>(t.name[i]);
    if (c < 0x20 || c == 0x7F) {
      ctx.sink.Add(RuleId::kTensorNameEncoding, t.name_offset() + i,
                   absl::StrCat("tensor name '", EscapeForDisplay(t.name), "' has control byte 0x",
                                absl::Hex(c, absl::kZeroPad2), " at ", i,
                                c == 0 ? " (ggml truncates the name there)" : ""));
      return;
    }
  }
}

// Byte size, dividing by the block size before multiplying
// (ggml's ggml_nbytes multiplies first and can wrap, #27200).
void ComputeTensorSize(TensorInfo& t, const GgmlTypeInfo& type, RuleContext& ctx) {
  const std::array<uint64_t, kMaxDims> dims = t.dims();
  for (uint32_t d = 0; d < t.n_dims; ++d) {
    if (static_cast<int64_t>(dims[d]) < 0) {
      ctx.sink.Add(RuleId::kNegativeDim, t.offset,
                   absl::StrCat("tensor '", EscapeForDisplay(t.name), "' dimension ", d, " is ",
                                static_cast<int64_t>(dims[d]), " read as int64"));
      return;
    }
  }
  // ggml_init_from_file checks INT64_MAX / ne[1] <= ne[0] (and so on for
  // ne[2], ne[3]) before anything else: a 0 there is a division by zero
  // (SIGFPE) in ggml of 2025-2026. A 0 in ne[0] gives an empty tensor whose
  // strides other readers compute as (ne - 1) * nb, wrapping. No writer
  // stores one.
  for (uint32_t d = 0; d < t.n_dims; ++d) {
    if (dims[d] == 0) {
      ctx.sink.Add(RuleId::kZeroDim, t.offset,
                   absl::StrCat("tensor '", EscapeForDisplay(t.name), "' dimension ", d,
                                " is 0: ggml's loader divides INT64_MAX by ne[1..3] (SIGFPE), and a zero-sized ",
                                "tensor can hide bytes after it"));
      break;
    }
  }
  if (dims[0] % type.block_size != 0) {
    ctx.sink.Add(RuleId::kRowNotBlockMultiple, t.offset,
                 absl::StrCat("tensor '", EscapeForDisplay(t.name), "' has ne[0] = ", dims[0],
                              ", not a multiple of the ", Sv(type.name), " block size ", type.block_size));
    return;
  }
  uint64_t elements = 1;
  uint64_t bytes = (dims[0] / type.block_size);
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
  // alone, whatever the file's size (--header-only --file-size).
  constexpr uint64_t kInt64Max = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  const bool ggml_refuses = ok && dims[1] != 0 && dims[2] != 0 && dims[3] != 0 &&  // 0: GG5012
                            (kInt64Max / dims[1] <= dims[0] || kInt64Max / dims[2] <= dims[0] * dims[1] ||
                             kInt64Max / dims[3] <= dims[0] * dims[1] * dims[2]);
  if (!ok || ggml_refuses || elements > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ||
      bytes > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ||
      strides > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    ctx.sink.Add(RuleId::kTensorSizeOverflow, t.offset,
                 absl::StrCat("tensor '", EscapeForDisplay(t.name), "' shape [", dims[0], ", ", dims[1], ", ",
                              dims[2], ", ", dims[3], "] of ", Sv(type.name), " overflows 63 bits"));
    return;
  }
  t.byte_size = bytes;
  t.size_known = true;
}

}  // namespace

void CheckTensorInfos(RuleContext& ctx) {
  GgufHeader& h = ctx.header;
  // Names as ggml sees them (C strings, cut at NUL): two names equal there
  // are the same tensor to the loader. The sort asks for each name several
  // times; names hold no NUL in nearly every file, so one scan first spares
  // it a memchr per question (~10% of validating a million tensor infos).
  bool any_nul = false;
  for (const TensorInfo& t : h.tensors) any_nul = any_nul || t.name.find('\0') != std::string_view::npos;
  const std::vector<uint32_t> first_named = FirstOfEqualViews(h.tensors.size(), [&](size_t i) {
    const std::string_view name = h.tensors[i].name;
    return any_nul ? name.substr(0, name.find('\0')) : name;
  });
  for (size_t i = 0; i < h.tensors.size(); ++i) {
    TensorInfo& t = h.tensors[i];
    CheckTensorName(t, ctx);
    if (const uint32_t f = first_named[i]; f != i) {
      const TensorInfo& first = h.tensors[f];
      ctx.sink.AddLazy(RuleId::kDuplicateTensorName, t.offset, [&] {
        return absl::StrCat("tensor name '", EscapeForDisplay(t.name), "' repeats tensor ", f, " at offset ",
                            first.offset, first.name != t.name ? " (equal as C strings)" : "");
      });
    }
    const GgmlTypeInfo* type = FindGgmlType(t.ggml_type);
    if (type == nullptr) {
      ctx.sink.AddLazy(RuleId::kUnknownGgmlType, t.type_offset(), [&] {
        return absl::StrCat("tensor '", EscapeForDisplay(t.name), "' has ggml type id ", t.ggml_type, ", unknown to ",
                            GgmlTypeTableVersion());
      });
      continue;
    }
    if (type->status == GgmlTypeStatus::kRemoved) {
      ctx.sink.Add(RuleId::kRemovedGgmlType, t.type_offset(),
                   absl::StrCat("tensor '", EscapeForDisplay(t.name), "' has removed ggml type ", t.ggml_type, " (",
                                Sv(type->name), ", block size 0)"));
      continue;
    }
    if (type->status == GgmlTypeStatus::kIntermediate) {
      ctx.sink.Add(RuleId::kIntermediateGgmlType, t.type_offset(),
                   absl::StrCat("tensor '", EscapeForDisplay(t.name), "' has compute-only ggml type ", Sv(type->name)));
    }
    ComputeTensorSize(t, *type, ctx);
  }
}

}  // namespace ggufguard
