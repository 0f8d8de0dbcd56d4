// 6xxx: where the tensor data lies. The goal is exact coverage, as in
// safetensors: the data section starts at the aligned end of the header,
// tensors follow in order, each aligned, with zero padding between them, and
// the file ends where the last tensor's padded data ends.
#include <algorithm>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "ggufguard/base/sv.h"
#include "ggufguard/base/checked_math.h"
#include "ggufguard/base/text.h"
#include "ggufguard/adapter/adapter_view.h"
#include "ggufguard/format/layout.h"
#include "ggufguard/rules/known_keys.h"
#include "ggufguard/rules/rules.h"

namespace ggufguard {
namespace {

// Records a finding when [begin, end) holds a non-zero byte. Both ends lie
// inside the file.
absl::Status CheckPadding(uint64_t begin, uint64_t end, std::string_view what, RuleContext& ctx) {
  if (begin >= end || !ctx.sink.Enabled(RuleId::kNonZeroPadding)) return absl::OkStatus();
  uint64_t first = 0;
  absl::StatusOr<bool> zero = ctx.file.AllZero(begin, end - begin, &first);
  if (!zero.ok()) return zero.status();
  if (!*zero) {
    ctx.sink.Add(RuleId::kNonZeroPadding, first,
                 absl::StrCat("non-zero byte in ", Sv(what), " [", begin, ", ", end, "): padding must be zero"));
  }
  return absl::OkStatus();
}

}  // namespace

std::vector<uint64_t> DataLayoutBoundaries(const GgufHeader& h) {
  // Every zero check of CheckDataLayout below starts and ends at one of
  // these, or at the end of the file: the header padding [infos_end,
  // data_offset), and padding from a tensor's end (or data_offset) to its
  // aligned end or to the next tensor's start.
  std::vector<uint64_t> out;
  if (!h.data_offset_known) return out;
  out.reserve(2 + 3 * h.tensors.size());
  out.push_back(h.infos_end);
  out.push_back(h.data_offset);
  for (const TensorInfo& t : h.tensors) {
    if (!t.absolute_known) continue;
    const uint64_t begin = t.absolute_offset;
    uint64_t end = 0, aligned = 0;
    out.push_back(begin);
    if (!t.size_known || !CheckedAdd(begin, t.byte_size, &end)) continue;
    out.push_back(end);
    if (CheckedAlignUp(end, h.alignment, &aligned)) out.push_back(aligned);
  }
  return out;
}

std::optional<uint64_t> DataSectionEnd(const GgufHeader& h) {
  if (!h.data_end_known) return std::nullopt;
  return h.data_end;
}

absl::Status CheckDataLayout(RuleContext& ctx) {
  const GgufHeader& h = ctx.header;
  if (!h.data_offset_known) return absl::OkStatus();
  const uint64_t file_size = ctx.file.size();
  const uint64_t align = h.alignment;

  // Header padding: what lies between the infos and the data section.
  absl::Status s = CheckPadding(h.infos_end, std::min(h.data_offset, file_size), "the header padding", ctx);
  if (!s.ok()) return s;

  if (h.tensors.empty()) {
    // No data section: the file may end at the infos or at their aligned end.
    if (file_size > h.data_offset) {
      ctx.sink.Add(RuleId::kTrailingBytes, h.data_offset,
                   absl::StrCat(file_size - h.data_offset, " bytes after the end of the header of a file with no tensors"));
    }
    return absl::OkStatus();
  }

  bool any_data = false;
  for (const TensorInfo& t : h.tensors) any_data |= (t.size_known && t.byte_size > 0);
  if (file_size <= h.data_offset && any_data) {
    ctx.sink.Add(RuleId::kMissingTensorData, std::min(file_size, h.data_offset),
                 absl::StrCat("the file ends at ", file_size, ", at or before the data section at ", h.data_offset,
                              ": no tensor data"));
    return absl::OkStatus();
  }

  // A tensor is placed when its data lies inside the file. The placed ones
  // are walked twice: in file order for their order, then by start (the
  // layout's order, format/layout.h) for overlaps, gaps and padding.
  auto placed = [&](const TensorInfo& t) {
    uint64_t end = 0;
    return TensorExtent(t, &end) && end <= file_size;
  };
  bool all_placed = true;
  bool have_previous = false;
  uint64_t previous_begin = 0;  // the placed tensor before, in file order
  for (size_t i = 0; i < h.tensors.size(); ++i) {
    const TensorInfo& t = h.tensors[i];
    const uint64_t relative = t.relative_offset();
    // Names are escaped only for a message: most tensors have none.
    if (relative % align != 0) {
      ctx.sink.Add(RuleId::kTensorMisaligned, t.relative_offset_field(),
                   absl::StrCat("tensor '", EscapeForDisplay(t.name), "' offset ", relative, " is not a multiple of the alignment ",
                                align));
    }
    if (!t.size_known) {
      all_placed = false;
      continue;
    }
    if (!placed(t)) {
      ctx.sink.Add(RuleId::kTensorOutOfBounds, t.relative_offset_field(),
                   absl::StrCat("tensor '", EscapeForDisplay(t.name), "' data at relative offset ", relative, " (", t.byte_size,
                                " bytes) extends past the end of the file at ", file_size));
      all_placed = false;
      continue;
    }
    // Order: tensor data should follow the infos' order. Report each
    // tensor that starts before its predecessor in file order.
    if (have_previous && t.absolute_offset < previous_begin) {
      ctx.sink.Add(RuleId::kTensorOutOfOrder, t.relative_offset_field(),
                   absl::StrCat("tensor '", EscapeForDisplay(t.name), "' data at ", t.absolute_offset,
                                " comes before that of the tensor listed before it (", previous_begin, ")"));
    }
    have_previous = true;
    previous_begin = t.absolute_offset;
  }

  uint64_t expected = h.data_offset;  // where the next tensor should start
  uint64_t covered_end = h.data_offset;  // the furthest byte any tensor reaches
  const TensorInfo* previous = nullptr;  // the placed tensor before, by start
  absl::Status padding = absl::OkStatus();
  ForEachExtentByStart(h, [&](uint32_t index) {
    const TensorInfo& t = h.tensors[index];
    if (!placed(t)) return true;
    const uint64_t begin = t.absolute_offset, end = begin + t.byte_size;  // TensorExtent: no overflow
    if (begin < covered_end) {
      ctx.sink.Add(RuleId::kTensorOverlap, t.relative_offset_field(),
                   absl::StrCat("tensor '", EscapeForDisplay(t.name), "' [", begin, ", ", end, ") overlaps tensor '",
                                EscapeForDisplay(previous->name), "' [", previous->absolute_offset, ", ",
                                previous->absolute_offset + previous->byte_size, ")"));
    } else {
      // Padding after the previous tensor, then any gap beyond it.
      padding = CheckPadding(covered_end, std::min(expected, begin), "inter-tensor padding", ctx);
      if (!padding.ok()) return false;
      if (begin > expected) {
        ctx.sink.Add(RuleId::kTensorGap, expected,
                     absl::StrCat(begin - expected, " unused bytes before tensor '", EscapeForDisplay(t.name),
                                  "' at ", begin, " (hidden data?)"));
      }
    }
    covered_end = std::max(covered_end, end);
    if (!CheckedAlignUp(covered_end, align, &expected)) expected = covered_end;
    previous = &t;
    return true;
  });
  if (!padding.ok()) return padding;

  if (!all_placed) return absl::OkStatus();  // the end of the data is unknown
  // The file ends after the last tensor, padded or not; zero padding only.
  uint64_t padded_end = expected;
  s = CheckPadding(covered_end, std::min(padded_end, file_size), "the final padding", ctx);
  if (!s.ok()) return s;
  // llama.cpp's model loader reads each tensor's own bytes, but ggml's
  // gguf_init_from_file with no_alloc=false reads the whole data section,
  // the last tensor's padding included, and refuses a file that ends inside
  // it. So does llama.cpp's control-vector loader, which reads that way
  // (GG9151 under the llama.cpp profile, where GG6012 does not run).
  if (file_size < padded_end) {
    ctx.sink.Add(RuleId::kUnpaddedEnd, file_size,
                 absl::StrCat("the file ends at ", file_size, ", ", padded_end - file_size,
                              " bytes before the last tensor's padded end at ", padded_end,
                              ": ggml's gguf_init_from_file with no_alloc=false refuses it"));
    if (ctx.sink.Enabled(RuleId::kControlVectorRefused) &&
        AdapterKindOf(KeyIndex(ctx.header)) == AdapterKind::kControlVector) {
      ctx.sink.Add(RuleId::kControlVectorRefused, file_size,
                   absl::StrCat("the control vector ends at ", file_size, ", ", padded_end - file_size,
                                " bytes before its last tensor's padded end at ", padded_end,
                                ": llama.cpp's control-vector loader reads the data whole (no_alloc=false) and "
                                "skips the file"));
    }
  }
  if (file_size > padded_end) {
    ctx.sink.Add(RuleId::kTrailingBytes, padded_end,
                 absl::StrCat(file_size - padded_end, " bytes after the end of the last tensor's data at ", padded_end,
                              ": a file can hide a second format there (polyglot)"));
  }
  return absl::OkStatus();
}

}  // namespace ggufguard
