// GG9163: the general.sampling.* keys as llama.cpp reads them, and the
// report's list of them (sampling_rules.h).
//
// llama.cpp keeps no types for these keys. llama_model::load_hparams turns
// every scalar KV into text (gguf_kv_to_str: a string as its C string, a
// number through std::to_string, a bool as "true"/"false"; arrays are left
// out), and common_init_from_params copies each of the twelve names into a
// 128-byte buffer (llama_model_meta_val_str) and reads it with strtol (top_k,
// penalty_last_n, mirostat, into an int32_t) or strtof (the others), keeping
// its own default when nothing parses. So "hot" is ignored without a word,
// -1.0 becomes top_k -1, 40.7 becomes 40, and 1e-7 becomes 0 (std::to_string
// writes six decimals). The sequence is split at ';' into sampler names, and
// a name llama.cpp does not know is skipped with a warning.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "ggufguard/base/sv.h"
#include "ggufguard/base/text.h"
#include "ggufguard/format/value_type.h"
#include "ggufguard/rules/known_keys.h"
#include "ggufguard/rules/rules.h"
#include "ggufguard/rules/sampling_rules.h"

namespace ggufguard {
namespace {

enum class Kind : uint8_t { kNames, kInt, kFloat };

// One of llama.cpp's LLAMA_MODEL_META_KEY_SAMPLING_* names, how
// common_init_from_params reads it, and the values its sampler gives a
// meaning to (common/sampling.cpp, src/llama-sampler.cpp): probabilities
// and thresholds in [0, 1]; temp 0 is greedy, and below 0 is not a
// temperature; top_k 0 turns the sampler off (-1 is not one of its values);
// penalty_last_n -1 is the whole context; mirostat is 0, 1 or 2.
struct SamplingKey {
  std::string_view name;
  Kind kind;
  double min;
  double max;
  std::string_view meaning;  // what the range says, for the message
};
constexpr double kNoMax = INFINITY;
constexpr SamplingKey kSamplingKeys[] = {
    {"general.sampling.sequence", Kind::kNames, 0, 0, ""},
    {"general.sampling.top_k", Kind::kInt, 0, kNoMax, "0 (off) or more"},
    {"general.sampling.top_p", Kind::kFloat, 0, 1, "a probability, 0 to 1"},
    {"general.sampling.min_p", Kind::kFloat, 0, 1, "a probability, 0 to 1"},
    {"general.sampling.xtc_probability", Kind::kFloat, 0, 1, "a probability, 0 to 1"},
    {"general.sampling.xtc_threshold", Kind::kFloat, 0, 1, "a probability, 0 to 1"},
    {"general.sampling.temp", Kind::kFloat, 0, kNoMax, "0 (greedy) or more"},
    {"general.sampling.penalty_last_n", Kind::kInt, -1, kNoMax, "-1 (the whole context), 0 (off) or more"},
    {"general.sampling.penalty_repeat", Kind::kFloat, 0, kNoMax, "above 0 (1 is off)"},
    {"general.sampling.mirostat", Kind::kInt, 0, 2, "0 (off), 1 or 2"},
    {"general.sampling.mirostat_tau", Kind::kFloat, 0, kNoMax, "0 or more"},
    {"general.sampling.mirostat_eta", Kind::kFloat, 0, kNoMax, "0 or more"},
};

// The sampler names common_sampler_types_from_names matches, canonical and
// alternative (common/sampling.cpp).
constexpr std::string_view kSamplerNames[] = {
    "dry",   "top_k",     "top_p",       "top_n_sigma", "typ_p",     "min_p",   "temperature", "xtc",
    "infill", "penalties", "adaptive_p", "top-k",       "top-p",     "top-n-sigma", "nucleus", "typical-p",
    "typical", "typ-p",    "typ",        "min-p",       "temp",
};

bool KnownSampler(std::string_view name) {
  for (std::string_view n : kSamplerNames) {
    if (n == name) return true;
  }
  return false;
}

// The buffers common_init_from_params copies a value's text into
// (llama_model_meta_val_str writes at most size - 1 bytes and a NUL).
constexpr size_t kNumberBuffer = 128;
constexpr size_t kSequenceBuffer = 512;

// What of gguf_kv_to_str's text of a scalar value lands in a buffer of
// `buffer` bytes; nullopt for an array, which load_hparams does not keep.
// A string is cut first, so a string of a gigabyte costs as much as one of
// a few bytes.
std::optional<std::string> TextForm(const Value& v, size_t buffer) {
  switch (v.type) {
    case ValueType::kArray: return std::nullopt;
    case ValueType::kString: return std::string(CString(v.AsString()).substr(0, buffer - 1));
    case ValueType::kBool: return std::string(v.bytes[0] != 0 ? "true" : "false");
    case ValueType::kFloat32: return std::to_string(static_cast<float>(*v.AsDouble()));
    case ValueType::kFloat64: return std::to_string(*v.AsDouble());
    case ValueType::kInt8:
    case ValueType::kInt16:
    case ValueType::kInt32:
    case ValueType::kInt64: return std::to_string(*v.AsSigned());
    default: return std::to_string(*v.AsUnsigned());
  }
}

// The value as the file has it, for the report and messages.
std::string Written(const Value& v) {
  const std::string type(ValueTypeName(v.type));
  switch (v.type) {
    case ValueType::kArray: return absl::StrCat("array of ", v.array.count);
    case ValueType::kString: return absl::StrCat("string '", EscapeForDisplay(v.AsString(), 60), "'");
    case ValueType::kBool: return absl::StrCat("bool ", v.bytes[0] != 0 ? "true" : "false");
    case ValueType::kFloat32:
    case ValueType::kFloat64: return absl::StrFormat("%s %g", type, *v.AsDouble());
    case ValueType::kInt8:
    case ValueType::kInt16:
    case ValueType::kInt32:
    case ValueType::kInt64: return absl::StrCat(type, " ", *v.AsSigned());
    default: return absl::StrCat(type, " ", *v.AsUnsigned());
  }
}

// The value the file means, when it is a number.
std::optional<double> Meant(const Value& v) {
  if (v.type == ValueType::kFloat32 || v.type == ValueType::kFloat64) return v.AsDouble();
  switch (v.type) {
    case ValueType::kBool:
    case ValueType::kString:
    case ValueType::kArray: return std::nullopt;
    case ValueType::kInt8:
    case ValueType::kInt16:
    case ValueType::kInt32:
    case ValueType::kInt64: return static_cast<double>(*v.AsSigned());
    default: return static_cast<double>(*v.AsUnsigned());
  }
}

// What llama.cpp makes of one key: the number it keeps (nullopt: its
// default stays), and why that differs from what the file says.
struct Reading {
  std::optional<double> used;
  std::string used_text;  // printable ASCII
  std::string problem;    // empty when llama.cpp reads the value as written
};

Reading ReadNumber(const SamplingKey& key, const Value& v) {
  Reading r;
  const std::optional<std::string> text = TextForm(v, kNumberBuffer);
  if (!text || text->empty()) {
    r.problem = !text ? "llama.cpp keeps no array among the text values it reads these from"
                      : "an empty string gives llama.cpp nothing to read";
    return r;
  }
  const std::string buf = text->substr(0, kNumberBuffer - 1);  // a number's text form can be longer
  char* end = nullptr;
  if (key.kind == Kind::kInt) {
    const long parsed = std::strtol(buf.c_str(), &end, 10);
    if (end == buf.c_str()) {
      r.problem = "llama.cpp reads no integer from it (strtol)";
      return r;
    }
    const int32_t used = static_cast<int32_t>(parsed);  // int32_t v = strtol(...)
    r.used = used;
    r.used_text = absl::StrCat(used);
  } else {
    const float used = std::strtof(buf.c_str(), &end);
    if (end == buf.c_str()) {
      r.problem = "llama.cpp reads no number from it (strtof)";
      return r;
    }
    r.used = used;
    r.used_text = absl::StrFormat("%g", used);
  }
  if (v.type == ValueType::kString) {
    if (*end != '\0') {
      r.problem = absl::StrCat("llama.cpp reads only its leading ", r.used_text, " (",
                               buf.size() - static_cast<size_t>(end - buf.c_str()), " bytes after it are dropped)");
    }
    return r;
  }
  const std::optional<double> meant = Meant(v);
  if (meant && *meant != *r.used && !(std::isnan(*meant) && std::isnan(*r.used))) {
    r.problem = key.kind == Kind::kInt
                    ? absl::StrCat("llama.cpp reads it through its text form as the int32 ", r.used_text)
                    : absl::StrCat("llama.cpp reads it through its six-decimal text form as ", r.used_text);
    // A float off by its rounding to six decimals, or by float precision,
    // is what the writer meant; only a value lost to that rounding counts.
    if (key.kind == Kind::kFloat && *r.used != 0) r.problem.clear();
  }
  return r;
}

}  // namespace

void CheckSamplingSettings(RuleContext& ctx, const KeyIndex& keys, SamplingSettings* out) {
  RuleReporter report(ctx, RuleId::kSamplingValue);
  for (const SamplingKey& key : kSamplingKeys) {
    const KeyValue* kv = keys.Find(key.name);
    if (kv == nullptr) continue;
    const Value v = kv->value();
    SamplingSetting setting{key.name, v.offset, Written(v), "ignored"};
    if (key.kind == Kind::kNames) {
      const std::optional<std::string> text = TextForm(v, kSequenceBuffer);
      std::vector<std::string> used;
      std::vector<std::string> unknown;
      if (text && !text->empty()) {
        // string_split at ';', as llama.cpp splits it (std::getline: no
        // empty piece after a final ';').
        size_t start = 0;
        while (start < text->size()) {
          size_t stop = text->find(';', start);
          if (stop == std::string::npos) stop = text->size();
          const std::string name = text->substr(start, stop - start);
          (KnownSampler(name) ? used : unknown).push_back(EscapeForDisplay(name, 40));
          start = stop + 1;
        }
      }
      if (text && !text->empty()) setting.llama_cpp = used.empty() ? "(no sampler)" : absl::StrJoin(used, ";");
      if (!text || !unknown.empty() || v.type != ValueType::kString) {
        report.Add(v.offset, [&] {
          return absl::StrCat(
              Sv(key.name), " is ", setting.written, ": ",
              !text ? "llama.cpp keeps no array among the text values it reads these from"
                    : absl::StrCat("llama.cpp splits it at ';' into sampler names and skips ",
                                   unknown.empty() ? std::string("none") : absl::StrJoin(unknown, ", "),
                                   ", which it does not know; every reply is sampled by ",
                                   used.empty() ? std::string("no sampler of the file's") : absl::StrJoin(used, ";")));
        });
      }
      out->listed.push_back(std::move(setting));
      continue;
    }
    const Reading r = ReadNumber(key, v);
    if (r.used) setting.llama_cpp = r.used_text;
    std::string range;
    if (r.used && !(*r.used >= key.min && *r.used <= key.max)) {  // NaN is outside too
      range = absl::StrCat(r.problem.empty() ? "" : "; ", r.used_text, " is outside what the sampler means by it (",
                           Sv(key.meaning), ")");
    }
    if (!r.problem.empty() || !range.empty()) {
      report.Add(v.offset, [&] {
        return absl::StrCat(Sv(key.name), " is ", setting.written, ": ", r.problem,
                            r.used ? "" : ", and keeps its own default", range,
                            "; the setting applies to every reply sampled with the file's defaults");
      });
    }
    out->listed.push_back(std::move(setting));
  }
}

}  // namespace ggufguard
