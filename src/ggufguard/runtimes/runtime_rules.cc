// The runtime rules (runtime_rules.h). Each check reads the parsed header
// once and the generated tables; docs/runtimes.md gives, for each rule, the
// runtime code it stands for.
#include "ggufguard/runtimes/runtime_rules.h"

#include <algorithm>
#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "ggufguard/base/sv.h"
#include "ggufguard/base/text.h"
#include "ggufguard/format/ggml_type.h"
#include "ggufguard/runtimes/runtime_tables.h"

namespace ggufguard {
namespace {

namespace t = runtime_tables;

// Records a runtime rule's findings: the first as the rule's RuntimeIssue
// (with a count), each as a finding only when the rule's runtime is
// required or the rule is always reported. Messages are built only for
// what is kept: the first issue, and findings the sink lists.
class RuntimeReporter {
 public:
  RuntimeReporter(RuleContext& ctx, std::vector<RuntimeIssue>* issues, RuleId id)
      : ctx_(ctx), issues_(issues), id_(id), enabled_(ctx.policy.Enabled(id)) {
    const std::optional<Profile> runtime = RuntimeOfRule(id);
    as_finding_ = enabled_ && (RuntimeRuleAlwaysReported(id) ||
                               (runtime && ctx.policy.RequiredRuntimes().Has(*runtime)));
  }
  // A disabled rule judges nothing, as any other rule.
  bool enabled() const { return enabled_; }

  template <typename MakeMessage>
  void Add(uint64_t offset, MakeMessage&& make) {
    if (!enabled_) return;
    if (at_ == 0) {
      issues_->push_back(RuntimeIssue{id_, offset, make(), 0});
      at_ = issues_->size();
    }
    ++(*issues_)[at_ - 1].count;
    if (as_finding_) ctx_.sink.AddLazy(id_, offset, make);
  }

 private:
  RuleContext& ctx_;
  std::vector<RuntimeIssue>* issues_;
  RuleId id_;
  bool enabled_;
  bool as_finding_ = false;
  size_t at_ = 0;  // 1 + the index of this rule's issue; 0 before the first
};

std::string TypeLabel(uint32_t id) {
  const GgmlTypeInfo* type = FindGgmlType(id);
  return type ? absl::StrCat(Sv(type->name), " (", id, ")") : absl::StrCat("type ", id);
}

std::string TensorLabel(const TensorInfo& tensor) { return absl::StrCat("'", EscapeForDisplay(tensor.name), "'"); }

// A ggml type id some other rule already calls unknown or removed (GG5007,
// GG5008): every runtime refuses it, and the runtime rules leave it to those.
bool KnownToGgml(uint32_t id) {
  const GgmlTypeInfo* type = FindGgmlType(id);
  return type != nullptr && type->status != kRemovedType;
}

// ---------------------------------------------------------------- ollama

// GG9200: ollama's Go reader holds every string (keys, values, array
// elements, tensor names) to MaxStringLength and every array to
// MaxArraySize before llama-server sees the file (fs/ggml/gguf.go).
void CheckOllamaReaderLimits(RuleContext& ctx, std::vector<RuntimeIssue>* issues) {
  RuntimeReporter r(ctx, issues, RuleId::kOllamaReaderLimit);
  if (!r.enabled()) return;
  const uint64_t max_string = t::kOllamaMaxStringLength;
  auto too_long = [&](uint64_t at, const std::string& what, uint64_t length) {
    r.Add(at, [&] {
      return absl::StrCat(what, " is ", length, " bytes long: ollama's reader refuses the file (GGUF string length ",
                          length, " exceeds maximum ", max_string, ")");
    });
  };
  for (const KeyValue& kv : ctx.header.kvs) {
    if (kv.key().size() > max_string) too_long(kv.offset(), "a key", kv.key().size());
    if (kv.type() != ValueType::kString && kv.type() != ValueType::kArray) continue;  // nothing long to decode
    const Value v = kv.value();
    if (v.type == ValueType::kString && v.bytes.size() > max_string) {
      too_long(kv.offset(), absl::StrCat("the value of ", EscapeForDisplay(kv.key())), v.bytes.size());
    }
    if (v.type != ValueType::kArray) continue;
    if (v.array.count > t::kOllamaMaxArraySize) {
      r.Add(kv.offset(), [&] {
        return absl::StrCat(EscapeForDisplay(kv.key()), " holds ", v.array.count,
                            " elements: ollama's reader refuses the file (GGUF array size exceeds maximum ",
                            t::kOllamaMaxArraySize, ")");
      });
    }
    // The parser keeps the longest element's length capped at
    // kLongestStringCap (KeyValue is compact), far below ollama's limit: a
    // capped length says one may be too long; the walk finds the first.
    static_assert(kLongestStringCap < t::kOllamaMaxStringLength);
    if (v.array.element_type == ValueType::kString && v.array.max_string_length >= kLongestStringCap) {
      v.array.ForEachString(v.array.count, [&](uint64_t i, std::string_view s, uint64_t at) {
        if (s.size() <= max_string) return true;
        too_long(at, absl::StrCat("element ", i, " of ", EscapeForDisplay(kv.key())), s.size());
        return false;
      });
    }
  }
  for (const TensorInfo& tensor : ctx.header.tensors) {
    if (tensor.name.size() > max_string) too_long(tensor.offset, "a tensor name", tensor.name.size());
  }
}

// GG9201: the reader sizes every tensor by TypeSize, which is 0 for a type
// it has no case for; the size check then refuses the whole file
// ("tensor %q size overflow"), though llama-server would load it.
void CheckOllamaTensorTypes(RuleContext& ctx, std::vector<RuntimeIssue>* issues) {
  RuntimeReporter r(ctx, issues, RuleId::kOllamaTensorType);
  if (!r.enabled()) return;
  for (const TensorInfo& tensor : ctx.header.tensors) {
    if (!KnownToGgml(tensor.ggml_type) || TableHas(t::kOllamaSizedTypes, tensor.ggml_type)) continue;
    r.Add(tensor.type_offset(), [&] {
      return absl::StrCat("tensor ", TensorLabel(tensor), " is ", TypeLabel(tensor.ggml_type),
                          ", which ollama's reader has no size for: it refuses the file (tensor size overflow)");
    });
  }
}

// ---------------------------------------------------------------- vLLM

// GG9210: gguf-py pushes GGUF.version, GGUF.tensor_count and GGUF.kv_count
// as fields before the file's keys; a key of the same name raises KeyError.
void CheckGgufPyOwnFields(RuleContext& ctx, std::vector<RuntimeIssue>* issues) {
  RuntimeReporter r(ctx, issues, RuleId::kVllmReaderRefused);
  if (!r.enabled()) return;
  for (const KeyValue& kv : ctx.header.kvs) {
    if (!kv.key().starts_with("GGUF.") || !TableHas(t::kGgufPyOwnFields, kv.key())) continue;
    r.Add(kv.offset(), [&] {
      return absl::StrCat("key ", EscapeForDisplay(kv.key()),
                          " is one of gguf-py's own fields: its GGUFReader raises KeyError (Duplicate ",
                          EscapeForDisplay(kv.key()), " already in list)");
    });
  }
}

// GG9211: gguf-py makes each tensor's type a GGMLQuantizationType (ValueError
// for an id it lacks), and vLLM's GGUF layers take only the weight types they
// dequantize or use as they are.
void CheckVllmTensorTypes(RuleContext& ctx, std::vector<RuntimeIssue>* issues) {
  RuntimeReporter r(ctx, issues, RuleId::kVllmTensorType);
  if (!r.enabled()) return;
  for (const TensorInfo& tensor : ctx.header.tensors) {
    const uint32_t type = tensor.ggml_type;
    if (!KnownToGgml(type) || TableHas(t::kVllmWeightTypes, type)) continue;
    const bool reader_knows = TableHas(t::kGgufPyTypes, type);
    r.Add(tensor.type_offset(), [&] {
      return reader_knows
                 ? absl::StrCat("tensor ", TensorLabel(tensor), " is ", TypeLabel(type),
                                ", which vLLM's GGUF layers do not compute with (Unsupported GGUF quantization type)")
                 : absl::StrCat("tensor ", TensorLabel(tensor), " is ", TypeLabel(type),
                                ", which gguf-py does not know: its GGUFReader refuses the file (", type,
                                " is not a valid GGMLQuantizationType)");
    });
  }
}

// GG9212: vLLM's GGUF kernels take a weight's rows and columns as int
// (gguf_kernel.cu), so a dimension of 2^31 or more is truncated and the
// kernels index outside the tensor (CVE-2026-53923). From the header alone,
// so --header-only --file-size finds it too.
void CheckVllmDimensions(RuleContext& ctx, std::vector<RuntimeIssue>* issues) {
  RuntimeReporter r(ctx, issues, RuleId::kVllmDimensionInt32);
  if (!r.enabled()) return;
  constexpr uint64_t kIntMax = 0x7fffffff;
  for (const TensorInfo& tensor : ctx.header.tensors) {
    const std::array<uint64_t, kMaxDims> dims = tensor.dims();
    for (uint32_t d = 0; d < tensor.n_dims; ++d) {
      if (dims[d] <= kIntMax) continue;
      r.Add(tensor.n_dims_offset() + 4 + uint64_t{tensor.length_size} * d, [&] {
        return absl::StrCat("tensor ", TensorLabel(tensor), " dimension ", d, " is ", dims[d],
                            ": vLLM's GGUF kernels take rows and columns as int, so it is truncated and they index "
                            "outside the tensor (CVE-2026-53923)");
      });
      break;  // one finding per tensor
    }
  }
}

// GG9213: gguf-py reads every key, array element and tensor info with a few
// numpy slices and Python objects of its own (_get_field_parts walks an
// array one element at a time), so its time grows with the number of items,
// whatever their size, at a cost per item measured by
// bench/measure_gguf_py_cost.py (docs/runtimes.md): per key, per string
// element, per other element, per tensor info, in microseconds, on the
// 2-core VM this project runs on (under load; a quiet machine is faster).
constexpr double kGgufPyMicrosPerKey = 190;
constexpr double kGgufPyMicrosPerString = 70;
constexpr double kGgufPyMicrosPerScalar = 40;
constexpr double kGgufPyMicrosPerTensor = 300;
// The largest real vocabularies (about 262,000 tokens with their scores and
// token types, or 151,000 tokens and as many merges) and tensor counts (about
// 2,000) cost gguf-py about 40 s at the rates above; the policy's
// max_gguf_py_parse_seconds (120 by default, three times that) bounds it.

void CheckGgufPyCost(RuleContext& ctx, std::vector<RuntimeIssue>* issues) {
  RuntimeReporter r(ctx, issues, RuleId::kVllmParserCost);
  if (!r.enabled()) return;
  const GgufHeader& h = ctx.header;
  double micros = kGgufPyMicrosPerKey * static_cast<double>(h.kvs.size()) +
                  kGgufPyMicrosPerTensor * static_cast<double>(h.tensors.size());
  const KeyValue* largest = nullptr;
  uint64_t largest_count = 0;
  for (const KeyValue& kv : h.kvs) {
    if (kv.type() != ValueType::kArray) continue;
    const Value v = kv.value();
    const bool strings = v.array.element_type == ValueType::kString;
    micros += (strings ? kGgufPyMicrosPerString : kGgufPyMicrosPerScalar) * static_cast<double>(v.array.count);
    if (v.array.count > largest_count) {
      largest = &kv;
      largest_count = v.array.count;
    }
  }
  const double seconds = micros / 1e6;
  if (seconds <= static_cast<double>(ctx.policy.limits.max_gguf_py_parse_seconds)) return;
  r.Add(largest != nullptr ? largest->offset() : 8, [&] {
    return absl::StrCat(h.kvs.size(), " keys, ", h.tensors.size(), " tensor infos and array elements (the largest: ",
                        largest != nullptr ? EscapeForDisplay(largest->key()) : std::string("none"), ", ",
                        largest_count, ") keep gguf-py's reader busy for about ", static_cast<uint64_t>(seconds),
                        " s, more than the policy's ", ctx.policy.limits.max_gguf_py_parse_seconds,
                        " (measured per item; real models take under 40 s)");
  });
}

// ---------------------------------------------------------------- mistral.rs

// A split model's later shards hold no model metadata: mistral.rs reads it
// from the first (GgufArchive merges the shards).
bool LaterShard(const KeyIndex& keys) {
  const KeyValue* no = keys.Find("split.no");
  if (no == nullptr) return false;
  const std::optional<uint64_t> n = no->value().AsUnsigned();
  return n.has_value() && *n > 0;
}

// GG9220: mistral.rs's GGUF pipeline reads general.architecture first and
// refuses a file without one, or with one that is not a string.
void CheckMistralRsArchitecture(RuleContext& ctx, const KeyIndex& keys, std::vector<RuntimeIssue>* issues) {
  RuntimeReporter r(ctx, issues, RuleId::kMistralRsArchitecture);
  if (!r.enabled() || LaterShard(keys)) return;
  const KeyValue* arch = keys.Find("general.architecture");
  if (arch == nullptr) {
    r.Add(0, [] { return std::string("no general.architecture: mistral.rs refuses the file (GGUF metadata is missing "
                                     "`general.architecture`)"); });
  } else if (arch->type() != ValueType::kString) {
    r.Add(arch->offset(), [&] {
      return absl::StrCat("general.architecture is ", Sv(ValueTypeName(arch->type())),
                          ": mistral.rs refuses the file (GGUF `general.architecture` must be a string)");
    });
  }
}

// The vocabulary's size, when the file has a token array.
std::optional<uint64_t> TokenCount(const KeyIndex& keys) {
  const KeyValue* tokens = keys.Find("tokenizer.ggml.tokens");
  if (tokens == nullptr || tokens->type() != ValueType::kArray) return std::nullopt;
  return tokens->value().array.count;
}

// GG9221: mistral.rs turns the GGUF vocabulary into a tokenizer only with an
// eos_token_id, and checks bos, eos and unk against the vocabulary (since
// v0.8.23, #2282: before, it indexed the token list with them and panicked).
// llama.cpp reads an id of 0xFFFFFFFF as "no token" and loads the file.
void CheckMistralRsSpecialTokens(RuleContext& ctx, const KeyIndex& keys, std::vector<RuntimeIssue>* issues) {
  RuntimeReporter r(ctx, issues, RuleId::kMistralRsSpecialToken);
  const std::optional<uint64_t> vocab = TokenCount(keys);
  if (!r.enabled() || !vocab) return;
  if (keys.Find("tokenizer.ggml.eos_token_id") == nullptr) {
    const KeyValue* tokens = keys.Find("tokenizer.ggml.tokens");
    r.Add(tokens->offset(), [] {
      return std::string("no tokenizer.ggml.eos_token_id: mistral.rs refuses to make a tokenizer of the vocabulary "
                         "(a required key)");
    });
  }
  for (std::string_view name : {"bos", "eos", "unknown"}) {
    const std::string key = absl::StrCat("tokenizer.ggml.", Sv(name), "_token_id");
    const KeyValue* kv = keys.Find(key);
    if (kv == nullptr) continue;
    const std::optional<uint64_t> id = kv->value().AsUnsigned();
    if (!id || *id < *vocab) continue;
    r.Add(kv->value().offset, [&] {
      return absl::StrCat(key, " is ", *id, ", past the vocabulary's ", *vocab,
                          " tokens: mistral.rs refuses the file (token id out of bounds; before v0.8.23 it indexed "
                          "the vocabulary and panicked)");
    });
  }
}

// GG9222: mistral.rs's own reader (GgufArchive) sizes a tensor only for the
// types it has a block size for; the data of any other is refused.
void CheckMistralRsTensorTypes(RuleContext& ctx, std::vector<RuntimeIssue>* issues) {
  RuntimeReporter r(ctx, issues, RuleId::kMistralRsTensorType);
  if (!r.enabled()) return;
  for (const TensorInfo& tensor : ctx.header.tensors) {
    if (!KnownToGgml(tensor.ggml_type) || TableHas(t::kMistralRsKnownTypes, tensor.ggml_type)) continue;
    r.Add(tensor.type_offset(), [&] {
      return absl::StrCat("tensor ", TensorLabel(tensor), " is ", TypeLabel(tensor.ggml_type),
                          ", which mistral.rs's GGUF reader cannot size: it refuses the tensor's data (cannot "
                          "determine the exact byte length)");
    });
  }
}

// GG9223: mistral.rs converts the GGUF vocabulary by tokenizer.ggml.model,
// with a converter for a few models only; a BPE one needs tokenizer.ggml.pre.
void CheckMistralRsTokenizer(RuleContext& ctx, const KeyIndex& keys, std::vector<RuntimeIssue>* issues) {
  RuntimeReporter r(ctx, issues, RuleId::kMistralRsTokenizer);
  if (!r.enabled() || !TokenCount(keys)) return;
  const KeyValue* model = keys.Find("tokenizer.ggml.model");
  if (model == nullptr || model->type() != ValueType::kString) return;  // GG4008, GG4004
  const std::string_view name = model->value().AsString();
  if (!TableHas(t::kMistralRsTokenizerModels, name)) {
    r.Add(model->value().offset, [&] {
      return absl::StrCat("tokenizer.ggml.model is '", EscapeForDisplay(name),
                          "': mistral.rs refuses the file (Tokenizer model not supported)");
    });
  } else if (TableHas(t::kMistralRsBpeModels, name) && keys.Find("tokenizer.ggml.pre") == nullptr) {
    r.Add(model->value().offset, [&] {
      return absl::StrCat("a '", EscapeForDisplay(name),
                          "' (BPE) vocabulary without tokenizer.ggml.pre: mistral.rs refuses to guess its "
                          "pre-tokenizer");
    });
  }
}

// ---------------------------------------------------------------- candle

// GG9230: candle's reader makes each tensor's type a GgmlDType (an id without
// one refuses the whole file), and loads the data of fewer types still.
void CheckCandleTensorTypes(RuleContext& ctx, std::vector<RuntimeIssue>* issues) {
  RuntimeReporter r(ctx, issues, RuleId::kCandleTensorType);
  if (!r.enabled()) return;
  for (const TensorInfo& tensor : ctx.header.tensors) {
    const uint32_t type = tensor.ggml_type;
    if (!KnownToGgml(type) || TableHas(t::kCandleLoadTypes, type)) continue;
    const bool reader_knows = TableHas(t::kCandleReaderTypes, type);
    r.Add(tensor.type_offset(), [&] {
      return reader_knows ? absl::StrCat("tensor ", TensorLabel(tensor), " is ", TypeLabel(type),
                                         ", whose data candle does not load (quantized type is not supported yet)")
                          : absl::StrCat("tensor ", TensorLabel(tensor), " is ", TypeLabel(type),
                                         ", which candle's GGUF reader does not know: it refuses the file (unknown "
                                         "dtype for tensor ",
                                         type, ")");
    });
  }
}

// GG9231: candle takes general.alignment from any integer type up to 32 bits
// and divides the data offset by it: 0 panics (division by zero). llama.cpp
// refuses 0 (GG4002); candle crashes instead.
void CheckCandleAlignment(RuleContext& ctx, const KeyIndex& keys, std::vector<RuntimeIssue>* issues) {
  RuntimeReporter r(ctx, issues, RuleId::kCandleAlignmentZero);
  if (!r.enabled()) return;
  const KeyValue* kv = keys.Find("general.alignment");
  if (kv == nullptr) return;
  std::string_view name;
  switch (kv->type()) {
    case ValueType::kUint8: name = "U8"; break;
    case ValueType::kInt8: name = "I8"; break;
    case ValueType::kUint16: name = "U16"; break;
    case ValueType::kInt16: name = "I16"; break;
    case ValueType::kUint32: name = "U32"; break;
    case ValueType::kInt32: name = "I32"; break;
    default: return;  // candle falls back to its default alignment
  }
  if (!TableHas(t::kCandleAlignmentTypes, name)) return;
  const Value v = kv->value();
  // Zero in any width is all bytes zero, whatever the byte order.
  if (std::any_of(v.bytes.begin(), v.bytes.end(), [](uint8_t b) { return b != 0; })) return;
  r.Add(v.offset, [&] {
    return absl::StrCat("general.alignment is ", Sv(ValueTypeName(kv->type())),
                        " 0: candle divides the data offset by it and panics (attempt to divide by zero)");
  });
}

}  // namespace

void CheckRuntimes(RuleContext& ctx, const KeyIndex& keys, std::vector<RuntimeIssue>* issues) {
  CheckOllamaReaderLimits(ctx, issues);
  CheckOllamaTensorTypes(ctx, issues);
  CheckGgufPyOwnFields(ctx, issues);
  CheckVllmTensorTypes(ctx, issues);
  CheckVllmDimensions(ctx, issues);
  CheckGgufPyCost(ctx, issues);
  CheckMistralRsArchitecture(ctx, keys, issues);
  CheckMistralRsSpecialTokens(ctx, keys, issues);
  CheckMistralRsTensorTypes(ctx, issues);
  CheckMistralRsTokenizer(ctx, keys, issues);
  CheckCandleTensorTypes(ctx, issues);
  CheckCandleAlignment(ctx, keys, issues);
}

}  // namespace ggufguard
