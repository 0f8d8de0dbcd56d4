// 4xxx general.alignment and 5xxx tensor infos.
#include <algorithm>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "ggufguard/base/sv.h"
#include "ggufguard/base/checked_math.h"
#include "ggufguard/base/text.h"
#include "ggufguard/format/ggml_type.h"
#include "ggufguard/format/layout.h"
#include "ggufguard/rules/key_groups.h"
#include "ggufguard/rules/rules.h"

namespace ggufguard {

void CheckAlignment(RuleContext& ctx) {
  const AlignmentReading alignment = ReadAlignment(ctx.header);
  const KeyValue* kv = alignment.kv;
  switch (alignment.problem) {
    case AlignmentReading::Problem::kNotU32:
      ctx.sink.Add(RuleId::kAlignmentType, kv->type_offset(),
                   absl::StrCat("general.alignment is ", Sv(ValueTypeName(kv->type())),
                                "; loaders require u32 (ggml rejects the file, candle silently uses 32)"));
      return;
    case AlignmentReading::Problem::kNotPowerOfTwo:
      ctx.sink.Add(RuleId::kAlignmentNotPowerOfTwo, kv->value().offset,
                   absl::StrCat("general.alignment ", alignment.value, " is not a power of two",
                                alignment.value == 0 ? " (0 divides by zero in candle and gguf-parser-go)" : ""));
      return;
    case AlignmentReading::Problem::kNone:
      break;
  }
  // Without a usable alignment (above) the layout marks every data offset
  // unknown, and the layout rules stay silent rather than report noise.
  const uint64_t a = alignment.value;
  if (kv != nullptr && (a < ctx.policy.limits.min_alignment || a > ctx.policy.limits.max_alignment)) {
    ctx.sink.Add(RuleId::kAlignmentOutOfRange, kv->value().offset,
                 absl::StrCat("general.alignment ", a, " is outside the policy bounds [",
                              ctx.policy.limits.min_alignment, ", ", ctx.policy.limits.max_alignment, "]"));
  }
}

namespace {

// What GG5007/GG5008 add when a fork of ggml writes the id: the file is
// likely that fork's, which upstream ggml and llama.cpp cannot read.
std::string ForkTypeNote(uint32_t id) {
  const ForkGgmlType* fork = FindForkGgmlType(id);
  if (fork == nullptr) return "";
  return absl::StrCat("; ", Sv(fork->fork), " writes ", Sv(fork->name), " at this id, so the file may be that fork's");
}

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

// Why the layout (format/layout.h) has no byte size for a tensor of a known
// type, and ggml's zero-dimension hazard, which leaves the size known (0).
void ReportTensorSize(const TensorInfo& t, const TensorSizeReading& size, RuleContext& ctx) {
  using Problem = TensorSizeReading::Problem;
  const std::array<uint64_t, kMaxDims> dims = t.dims();
  if (size.problem == Problem::kNegativeDim) {
    ctx.sink.Add(RuleId::kNegativeDim, t.offset,
                 absl::StrCat("tensor '", EscapeForDisplay(t.name), "' dimension ", size.dim, " is ",
                              static_cast<int64_t>(dims[size.dim]), " read as int64"));
    return;
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
  if (size.problem == Problem::kRowNotBlockMultiple) {
    ctx.sink.Add(RuleId::kRowNotBlockMultiple, t.offset,
                 absl::StrCat("tensor '", EscapeForDisplay(t.name), "' has ne[0] = ", dims[0],
                              ", not a multiple of the ", Sv(size.type->name), " block size ", size.type->block_size));
  } else if (size.problem == Problem::kOverflow) {
    ctx.sink.Add(RuleId::kTensorSizeOverflow, t.offset,
                 absl::StrCat("tensor '", EscapeForDisplay(t.name), "' shape [", dims[0], ", ", dims[1], ", ",
                              dims[2], ", ", dims[3], "] of ", Sv(size.type->name), " overflows 63 bits"));
  }
}

}  // namespace

void CheckTensorInfos(RuleContext& ctx) {
  const GgufHeader& h = ctx.header;
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
    const TensorInfo& t = h.tensors[i];
    CheckTensorName(t, ctx);
    if (const uint32_t f = first_named[i]; f != i) {
      const TensorInfo& first = h.tensors[f];
      ctx.sink.AddLazy(RuleId::kDuplicateTensorName, t.offset, [&] {
        return absl::StrCat("tensor name '", EscapeForDisplay(t.name), "' repeats tensor ", f, " at offset ",
                            first.offset, first.name != t.name ? " (equal as C strings)" : "");
      });
    }
    const TensorSizeReading size = ReadTensorSize(t);
    switch (size.problem) {
      case TensorSizeReading::Problem::kUnknownTypeId:
        ctx.sink.AddLazy(RuleId::kUnknownGgmlType, t.type_offset(), [&] {
          return absl::StrCat("tensor '", EscapeForDisplay(t.name), "' has ggml type id ", t.ggml_type,
                              ", unknown to ", GgmlTypeTableVersion(), ForkTypeNote(t.ggml_type),
                              ": no size is assumed for it, and ggml's reader refuses the file");
        });
        continue;
      case TensorSizeReading::Problem::kRetiredType:
        ctx.sink.Add(RuleId::kRemovedGgmlType, t.type_offset(),
                     absl::StrCat("tensor '", EscapeForDisplay(t.name), "' has removed ggml type ", t.ggml_type, " (",
                                  Sv(size.type->name), ", block size 0)", ForkTypeNote(t.ggml_type)));
        continue;
      default:
        break;
    }
    if (size.type->status == GgmlTypeStatus::kIntermediate) {
      ctx.sink.Add(RuleId::kIntermediateGgmlType, t.type_offset(),
                   absl::StrCat("tensor '", EscapeForDisplay(t.name), "' has compute-only ggml type ",
                                Sv(size.type->name)));
    }
    ReportTensorSize(t, size, ctx);
  }
}

}  // namespace ggufguard
