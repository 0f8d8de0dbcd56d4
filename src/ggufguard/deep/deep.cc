#include "ggufguard/deep/deep.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <thread>

#include "absl/strings/str_cat.h"
#include "ggufguard/base/checked_math.h"
#include "ggufguard/base/sv.h"
#include "ggufguard/base/text.h"
#include "ggufguard/format/ggml_type.h"
#include "ggufguard/format/layout.h"

namespace ggufguard {

DeepPlan PlanDeepCheck(const GgufHeader& header, const Policy& policy) {
  DeepPlan plan;
  plan.order = header.byte_order;
  plan.max_listed = policy.limits.max_deep_findings_per_tensor;
  if (!header.data_offset_known) return plan;
  uint64_t budget = policy.limits.max_deep_bytes;
  uint64_t covered_to = 0;
  // By start (the layout's order), the tensors whose extent is known: the
  // header rules have said why any other has none; a sound header has none.
  ForEachExtentByStart(header, [&](uint32_t tensor) {
    const TensorInfo& t = header.tensors[tensor];
    const uint64_t begin = t.absolute_offset, end = begin + t.byte_size;  // TensorExtent: no overflow
    const DataCheck& check = DataCheckFor(t.ggml_type);
    if (check.kind == DataCheckKind::kUnknown || check.unit_bytes == 0) return true;
    if (begin < covered_to) {
      plan.overlapping.push_back(tensor);
      return true;
    }
    covered_to = end;
    if (check.kind == DataCheckKind::kRefused) {
      plan.refused_type.push_back(tensor);
      return true;
    }
    const uint64_t bytes = end - begin;
    uint64_t units = bytes / check.unit_bytes;  // whole: the tensor rules proved bytes % unit == 0
    const uint64_t affordable = budget / check.unit_bytes;
    if (units > affordable) {
      plan.unplanned_bytes += (units - affordable) * check.unit_bytes;
      ++plan.limited_tensors;
      units = affordable;
    }
    budget -= units * check.unit_bytes;
    if (units != 0) plan.items.push_back({tensor, begin, units, &check});
    return true;
  });
  return plan;
}

namespace {

struct Chunk {
  size_t item;
  uint64_t first_unit;
  uint64_t units;
  size_t slot;  // where a piece of a split item keeps its result; kWhole: the item's own
};
constexpr size_t kWhole = SIZE_MAX;

// An item that fits one chunk writes its own result; only the pieces of a
// larger one (more than chunk_bytes, so few) get a slot each, merged in order
// afterwards. A million tiny tensors then cost one Chunk each, no more.
std::vector<Chunk> SplitIntoChunks(const DeepPlan& plan, uint64_t source_size, size_t chunk_bytes, size_t* slots) {
  std::vector<Chunk> chunks;
  *slots = 0;
  for (size_t i = 0; i < plan.items.size(); ++i) {
    const DeepItem& item = plan.items[i];
    const uint64_t w = item.check->unit_bytes;
    uint64_t end = 0;
    if (!CheckedAdd(item.offset, item.units * w, &end) || end > source_size) continue;  // never finished
    const uint64_t per_chunk = std::max<uint64_t>(1, chunk_bytes / w);
    if (item.units <= per_chunk) {
      chunks.push_back({i, 0, item.units, kWhole});
      continue;
    }
    for (uint64_t u = 0; u < item.units; u += per_chunk) {
      chunks.push_back({i, u, std::min(per_chunk, item.units - u), (*slots)++});
    }
  }
  return chunks;
}

}  // namespace

absl::Status RunDeepOnSource(const DeepPlan& plan, ByteSource& source, const DeepOptions& options,
                             std::vector<DeepItemResult>* results) {
  results->assign(plan.items.size(), DeepItemResult{});
  const size_t chunk_bytes = std::max<size_t>(options.chunk_bytes, 512);
  size_t slots = 0;
  const std::vector<Chunk> chunks = SplitIntoChunks(plan, source.size(), chunk_bytes, &slots);
  std::vector<DeepItemResult> pieces(slots);
  const absl::Span<const uint8_t> memory = source.Memory();
  unsigned jobs = options.jobs ? options.jobs : std::max(1u, std::thread::hardware_concurrency());
  jobs = static_cast<unsigned>(std::min<size_t>(jobs, std::max<size_t>(chunks.size(), 1)));

  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  std::vector<absl::Status> status(jobs);
  // A chunk is read in pieces of read_bytes (whole units), so that the
  // buffer the kernel reads back stays in the core's L2 (docs/performance.md,
  // "Deep validation"); the chunk list stays at chunk_bytes granularity.
  const size_t read_bytes = std::max<size_t>(std::min(options.read_bytes, chunk_bytes), 512);
  auto work = [&](unsigned worker) {
    std::unique_ptr<uint8_t[]> buffer;
    if (memory.empty()) buffer.reset(new uint8_t[read_bytes]);
    for (size_t c = next++; c < chunks.size() && !failed; c = next++) {
      const Chunk& chunk = chunks[c];
      const DeepItem& item = plan.items[chunk.item];
      const uint64_t w = item.check->unit_bytes;
      const uint64_t offset = item.offset + chunk.first_unit * w;  // inside the source: SplitIntoChunks
      DeepItemResult& r = chunk.slot == kWhole ? (*results)[chunk.item] : pieces[chunk.slot];
      r.units_done = chunk.units;
      if (item.check->kind == DataCheckKind::kNothing) continue;  // integers: nothing to read
      if (!memory.empty()) {
        r.bad_values = CheckDataUnits(*item.check, plan.order, memory.data() + offset, chunk.units, chunk.first_unit,
                                      plan.max_listed, &r.listed);
        continue;
      }
      const uint64_t per_read = std::max<uint64_t>(1, read_bytes / w);  // a unit is <= 292 bytes <= read_bytes
      for (uint64_t u = 0; u < chunk.units; u += per_read) {
        const uint64_t k = std::min(per_read, chunk.units - u);
        absl::Status s = source.ReadAt(offset + u * w, absl::Span<uint8_t>(buffer.get(), static_cast<size_t>(k * w)));
        if (!s.ok()) {
          status[worker] = std::move(s);
          failed = true;
          return;
        }
        // The listed values accumulate in unit order, up to max_listed.
        r.bad_values += CheckDataUnits(*item.check, plan.order, buffer.get(), k, chunk.first_unit + u,
                                       plan.max_listed, &r.listed);
      }
    }
  };
  if (jobs <= 1) {
    work(0);
  } else {
    std::vector<std::thread> threads;
    threads.reserve(jobs);
    for (unsigned j = 0; j < jobs; ++j) threads.emplace_back(work, j);
    for (std::thread& t : threads) t.join();
  }
  for (absl::Status& s : status) {
    if (!s.ok()) return s;
  }
  // Chunks are in unit order within each item: merging in chunk order lists
  // the item's first bad values whatever the number of workers.
  for (const Chunk& c : chunks) {
    if (c.slot == kWhole) continue;
    DeepItemResult& into = (*results)[c.item];
    const DeepItemResult& piece = pieces[c.slot];
    into.units_done += piece.units_done;
    into.bad_values += piece.bad_values;
    for (const BadValue& b : piece.listed) {
      if (into.listed.size() >= plan.max_listed) break;
      into.listed.push_back(b);
    }
  }
  return absl::OkStatus();
}

DeepStreamChecker::DeepStreamChecker(const DeepPlan& plan) : plan_(plan), results_(plan.items.size()) {}

void DeepStreamChecker::CheckUnits(size_t item, const uint8_t* p, uint64_t n) {
  DeepItemResult& r = results_[item];
  const DeepItem& it = plan_.items[item];
  std::vector<BadValue> listed;
  const size_t room = plan_.max_listed - std::min(plan_.max_listed, r.listed.size());
  r.bad_values += CheckDataUnits(*it.check, plan_.order, p, n, r.units_done, room, &listed);
  r.listed.insert(r.listed.end(), listed.begin(), listed.end());
  r.units_done += n;
}

void DeepStreamChecker::Feed(uint64_t position, const uint8_t* p, size_t n) {
  while (n > 0 && next_ < plan_.items.size()) {
    const DeepItem& item = plan_.items[next_];
    const uint64_t w = item.check->unit_bytes;
    DeepItemResult& r = results_[next_];
    if (r.units_done == item.units) {  // finished (or nothing to check)
      ++next_;
      continue;
    }
    // Where this item's next unit starts; bytes before it are not ours.
    const uint64_t want = item.offset + r.units_done * w + carried_;
    if (position + n <= want) return;
    if (position < want) {
      const uint64_t skip = want - position;
      p += skip;
      n -= static_cast<size_t>(skip);
      position = want;
    }
    if (position > want) {  // a gap in the calls: cannot happen with an in-order stream
      ++next_;
      carried_ = 0;
      continue;
    }
    if (carried_ > 0) {  // complete the unit cut by the previous read
      const size_t take = std::min<size_t>(w - carried_, n);
      std::memcpy(carry_ + carried_, p, take);
      carried_ += static_cast<uint32_t>(take);
      p += take;
      n -= take;
      position += take;
      if (carried_ < w) return;
      carried_ = 0;
      CheckUnits(next_, carry_, 1);
      continue;
    }
    const uint64_t whole = std::min<uint64_t>(n / w, item.units - r.units_done);
    if (whole > 0) {
      CheckUnits(next_, p, whole);
      p += whole * w;
      n -= static_cast<size_t>(whole * w);
      position += whole * w;
      continue;
    }
    // Less than a unit left in this read: carry it.
    std::memcpy(carry_, p, n);
    carried_ = static_cast<uint32_t>(n);
    return;
  }
}

void ReportDeep(const GgufHeader& header, const DeepPlan& plan, const std::vector<DeepItemResult>& results,
                uint64_t file_size, uint32_t max_list_entries, FindingSink& sink, DeepSummary* summary) {
  *summary = DeepSummary{};
  summary->ran = true;
  auto type_name = [&](uint32_t tensor) {
    const GgmlTypeInfo* info = FindGgmlType(header.tensors[tensor].ggml_type);
    return info ? info->name : std::string_view("?");
  };
  // At most max_list_entries of each kind are kept: the summary lists no
  // more than that, and a million tensors must not cost a million entries.
  std::vector<DeepTensorResult> bad, clean;
  for (size_t i = 0; i < plan.items.size() && i < results.size(); ++i) {
    const DeepItem& item = plan.items[i];
    const DeepItemResult& r = results[i];
    const TensorInfo& t = header.tensors[item.tensor];
    const uint64_t w = item.check->unit_bytes;
    if (r.units_done < item.units) {  // the file ended inside it: the layout rules report that
      summary->unchecked_bytes += item.units * w;
      continue;
    }
    ++summary->checked_tensors;
    summary->checked_bytes += item.units * w;
    summary->bad_values += r.bad_values;
    std::vector<DeepTensorResult>& kind = r.bad_values ? bad : clean;
    if (kind.size() < max_list_entries) {
      kind.push_back({item.tensor, item.units * w, r.bad_values});
    } else {
      ++summary->tensors_suppressed;
    }
    if (!r.bad_values || !sink.Enabled(RuleId::kTensorDataNonFinite)) continue;
    const bool blocks = item.check->kind != DataCheckKind::kF32 && item.check->kind != DataCheckKind::kF64 &&
                        item.check->kind != DataCheckKind::kF16 && item.check->kind != DataCheckKind::kBF16;
    const std::string name = EscapeForDisplay(t.name);
    for (const BadValue& b : r.listed) {
      const std::string where =
          blocks ? absl::StrCat("block ", b.unit, " ", Sv(item.check->field_name[b.field]))
                 : absl::StrCat("element ", b.unit);
      sink.Add(RuleId::kTensorDataNonFinite, item.offset + b.unit * w + b.byte_in_unit,
               absl::StrCat("tensor '", name, "' (", Sv(type_name(item.tensor)), ") ", where, " is ",
                            DescribeBadValue(*item.check, b)));
    }
    if (r.bad_values > r.listed.size()) {
      sink.Add(RuleId::kTensorDataNonFinite, item.offset,
               absl::StrCat("tensor '", name, "' (", Sv(type_name(item.tensor)), ") holds ", r.bad_values,
                            " non-finite values in all; the first ", r.listed.size(), " are listed"));
    }
  }
  for (uint32_t tensor : plan.refused_type) {
    const TensorInfo& t = header.tensors[tensor];
    summary->unchecked_bytes += t.byte_size;
    sink.Add(RuleId::kTensorDataUncheckable, t.type_offset(),
             absl::StrCat("tensor '", EscapeForDisplay(t.name), "' is ", Sv(type_name(tensor)),
                          ", a type ggml_validate_row_data refuses: llama.cpp with --check-tensors does not load it, "
                          "and its data was not checked"));
  }
  for (uint32_t tensor : plan.overlapping) summary->unchecked_bytes += header.tensors[tensor].byte_size;
  const uint64_t data_section = std::min(header.data_offset, file_size);
  if (plan.limited_tensors > 0) {
    summary->unchecked_bytes += plan.unplanned_bytes;
    sink.Add(RuleId::kDeepCheckLimit, data_section,
             absl::StrCat("max_deep_bytes reached: ", plan.unplanned_bytes, " bytes of ", plan.limited_tensors,
                          " tensors were not checked"));
  }
  if (!plan.overlapping.empty()) {
    sink.Add(RuleId::kDeepCheckLimit, data_section,
             absl::StrCat(plan.overlapping.size(), " tensors overlapping an earlier tensor's data were not checked"));
  }
  for (auto* list : {&bad, &clean}) {
    for (const DeepTensorResult& r : *list) {
      if (summary->tensors.size() < max_list_entries) {
        summary->tensors.push_back(r);
      } else {
        ++summary->tensors_suppressed;
      }
    }
  }
}

}  // namespace ggufguard
