// A thin C++17 wrapper over the C API (ggufguard.h): owning handles that free
// themselves, and errors as exceptions. It is header-only and uses nothing
// but the C API and the standard library, so the installed headers expose
// neither Abseil nor ggufguard's internals, and an application may be built
// with another compiler or standard library than ggufguard was.
//
//   ggufguard::api::Report report = ggufguard::api::Validate("model.gguf");
//   if (!report.valid()) { for (const auto& f : report.findings()) ...; }
//   ggufguard::api::Mapping map(report, "model.gguf");
//   for (size_t i = 0; i < report.tensor_count(); ++i) map.data(i) ...
#ifndef GGUFGUARD_GGUFGUARD_HPP_
#define GGUFGUARD_GGUFGUARD_HPP_

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "ggufguard/ggufguard.h"

namespace ggufguard::api {

// A failed call (I/O, bad argument, bad policy): never an invalid file,
// which is a Report whose valid() is false.
class Error : public std::runtime_error {
 public:
  Error(ggufguard_status status, const std::string& what) : std::runtime_error(what), status_(status) {}
  ggufguard_status status() const { return status_; }

 private:
  ggufguard_status status_;
};

inline void Check(ggufguard_status status) {
  if (status != GGUFGUARD_OK) {
    throw Error(status, std::string(ggufguard_status_name(status)) + ": " + ggufguard_last_error());
  }
}

class Policy {
 public:
  // "default" or "strict".
  static Policy Builtin(const char* name) {
    ggufguard_policy* p = nullptr;
    Check(ggufguard_policy_builtin(name, &p));
    return Policy(p);
  }
  static Policy FromJson(std::string_view json) {
    ggufguard_policy* p = nullptr;
    Check(ggufguard_policy_from_json(json.data(), json.size(), &p));
    return Policy(p);
  }
  const ggufguard_policy* get() const { return policy_.get(); }

 private:
  struct Free {
    void operator()(ggufguard_policy* p) const { ggufguard_policy_free(p); }
  };
  explicit Policy(ggufguard_policy* p) : policy_(p) {}
  std::unique_ptr<ggufguard_policy, Free> policy_;
};

struct Finding {
  std::string rule;  // "GG3011"
  std::string name;  // "duplicate-key"
  ggufguard_severity severity;
  uint64_t offset;
  std::string message;
};

// What one runtime would do with the file (ggufguard_runtime_verdict).
struct RuntimeVerdict {
  std::string runtime;  // "llama.cpp", "ollama", "vllm", "mistral.rs", "candle"
  std::string verdict;  // "loads", "refuses", "hangs", "crashes", "inconclusive"
  bool required;        // the policy names it: a refusal is then an error finding too
  std::string rule;     // "GG9212"; empty when it loads
  uint64_t offset;
  std::string reason;   // what the runtime would say (escaped file bytes)
  std::string judged_at;
};

// The check of the tensor data (ValidateDeep): totals, and per tensor
// (those with bad values first; at most the policy's max_list_entries).
struct DeepTensor {
  std::string name;
  size_t tensor;  // index in the file's tensor infos
  uint32_t ggml_type;
  uint64_t checked_bytes;
  uint64_t bad_values;
};

struct DeepSummary {
  uint64_t checked_tensors;
  uint64_t checked_bytes;
  uint64_t bad_values;  // non-finite values and scales, listed as findings or not
  uint64_t unchecked_bytes;
  std::vector<DeepTensor> tensors;
  uint64_t tensors_suppressed;
};

class Report {
 public:
  explicit Report(ggufguard_report* r) : report_(r) {}

  bool valid() const { return ggufguard_report_valid(get()) != 0; }
  uint64_t file_size() const { return ggufguard_report_file_size(get()); }
  // True for ValidatePrefix: the verdict says nothing of the data bytes.
  bool header_only() const { return ggufguard_report_header_only(get()) != 0; }
  // The gatekeeper's answer: accept only kValid. A header-only report with
  // no error is valid() but kInconclusive (not_checked() says what was not).
  enum class Verdict { kValid = GGUFGUARD_VERDICT_VALID, kInvalid = GGUFGUARD_VERDICT_INVALID,
                       kInconclusive = GGUFGUARD_VERDICT_INCONCLUSIVE };
  Verdict verdict() const { return static_cast<Verdict>(ggufguard_report_verdict(get())); }
  // One human-readable item per part not checked; may quote a path: escape
  // before display.
  std::vector<std::string> not_checked() const {
    std::vector<std::string> out;
    for (size_t i = 0, n = ggufguard_report_not_checked_count(get()); i < n; ++i) {
      out.emplace_back(ggufguard_report_not_checked_at(get(), i));
    }
    return out;
  }
  // Tensor data is in the file's byte order, not converted (ggufguard.h).
  bool big_endian() const { return ggufguard_report_big_endian(get()) != 0; }
  // Findings past each rule's listing limit, counted only.
  uint64_t findings_suppressed() const { return ggufguard_report_findings_suppressed(get()); }

  std::vector<Finding> findings() const {
    std::vector<Finding> out;
    for (size_t i = 0, n = ggufguard_finding_count(get()); i < n; ++i) {
      ggufguard_finding f;
      Check(ggufguard_finding_at(get(), i, &f));
      out.push_back({f.rule, f.name, static_cast<ggufguard_severity>(f.severity), f.offset, f.message});
    }
    return out;
  }

  // Every runtime's verdict when the policy names none, the named ones' otherwise.
  std::vector<RuntimeVerdict> runtimes() const {
    std::vector<RuntimeVerdict> out;
    for (size_t i = 0, n = ggufguard_runtime_count(get()); i < n; ++i) {
      ggufguard_runtime_verdict v;
      Check(ggufguard_runtime_at(get(), i, &v));
      out.push_back({v.runtime, v.verdict, v.required != 0, v.rule ? v.rule : "", v.offset, v.reason, v.judged_at});
    }
    return out;
  }

  // std::nullopt unless the data was checked (ValidateDeep, header parsed).
  std::optional<DeepSummary> deep() const {
    if (ggufguard_report_deep_ran(get()) == 0) return std::nullopt;
    DeepSummary d{ggufguard_report_deep_checked_tensors(get()), ggufguard_report_deep_checked_bytes(get()),
                  ggufguard_report_deep_bad_values(get()), ggufguard_report_deep_unchecked_bytes(get()), {},
                  ggufguard_report_deep_tensors_suppressed(get())};
    for (size_t i = 0, n = ggufguard_deep_tensor_count(get()); i < n; ++i) {
      ggufguard_deep_tensor t;
      Check(ggufguard_deep_tensor_at(get(), i, &t));
      d.tensors.push_back({std::string(t.name, t.name_length), t.tensor, t.ggml_type, t.checked_bytes, t.bad_values});
    }
    return d;
  }

  // The trusted table: empty unless tensor_table_trusted(), which needs
  // valid() and a table that keeps its promise whatever the policy allowed.
  bool tensor_table_trusted() const { return ggufguard_report_tensor_table_trusted(get()) != 0; }
  size_t tensor_count() const { return ggufguard_tensor_count(get()); }
  ggufguard_tensor tensor(size_t i) const {
    ggufguard_tensor t;
    Check(ggufguard_tensor_at(get(), i, &t));
    return t;
  }

  // Metadata: std::nullopt when the key is absent; an Error when it has
  // another type.
  std::optional<std::string_view> get_string(const char* key) const {
    const char* data = nullptr;
    size_t length = 0;
    if (!Present(ggufguard_get_string(get(), key, &data, &length))) return std::nullopt;
    return std::string_view(data, length);
  }
  std::optional<uint64_t> get_uint64(const char* key) const {
    uint64_t v = 0;
    if (!Present(ggufguard_get_uint64(get(), key, &v))) return std::nullopt;
    return v;
  }
  std::optional<int64_t> get_int64(const char* key) const {
    int64_t v = 0;
    if (!Present(ggufguard_get_int64(get(), key, &v))) return std::nullopt;
    return v;
  }
  std::optional<double> get_float64(const char* key) const {
    double v = 0;
    if (!Present(ggufguard_get_float64(get(), key, &v))) return std::nullopt;
    return v;
  }

  const ggufguard_report* get() const { return report_.get(); }

 private:
  static bool Present(ggufguard_status s) {
    if (s == GGUFGUARD_ERR_NOT_FOUND) return false;
    Check(s);
    return true;
  }
  struct Free {
    void operator()(ggufguard_report* r) const { ggufguard_report_free(r); }
  };
  std::unique_ptr<ggufguard_report, Free> report_;
};

inline Report Validate(const char* path, const Policy* policy = nullptr) {
  ggufguard_report* r = nullptr;
  Check(ggufguard_validate_path(path, policy ? policy->get() : nullptr, &r));
  return Report(r);
}

// `bytes` must outlive the report.
inline Report ValidateBuffer(const void* bytes, size_t size, const Policy* policy = nullptr) {
  ggufguard_report* r = nullptr;
  Check(ggufguard_validate_buffer(bytes, size, policy ? policy->get() : nullptr, &r));
  return Report(r);
}

// A file's first `size` bytes (at least its whole header), validated as the
// header of a file of `file_size` bytes: every tensor inside the file, the
// data section unread (header_only()). The report keeps its own copy, so
// `bytes` may be freed at once. Throws Error (GGUFGUARD_ERR_IO) when the
// bytes end inside the header; its message says how many are needed.
inline Report ValidatePrefix(const void* bytes, size_t size, uint64_t file_size, const Policy* policy = nullptr) {
  ggufguard_report* r = nullptr;
  Check(ggufguard_validate_prefix(bytes, size, file_size, policy ? policy->get() : nullptr, &r));
  return Report(r);
}

// Validate, then every tensor's data checked for NaN and infinities as
// llama.cpp's ggml_validate_row_data checks it, on `jobs` threads (0: one
// per core): reads the whole file.
inline Report ValidateDeep(const char* path, const Policy* policy = nullptr, uint32_t jobs = 0) {
  ggufguard_report* r = nullptr;
  Check(ggufguard_validate_path_deep(path, policy ? policy->get() : nullptr, jobs, &r));
  return Report(r);
}

// `bytes` must outlive the report.
inline Report ValidateBufferDeep(const void* bytes, size_t size, const Policy* policy = nullptr, uint32_t jobs = 0) {
  ggufguard_report* r = nullptr;
  Check(ggufguard_validate_buffer_deep(bytes, size, policy ? policy->get() : nullptr, jobs, &r));
  return Report(r);
}

// The validated file mapped read-only; data(i) is tensor i's bytes.
class Mapping {
 public:
  Mapping(const Report& report, const char* path) {
    ggufguard_mapping* m = nullptr;
    Check(ggufguard_map_path(report.get(), path, &m));
    mapping_.reset(m);
  }
  size_t tensor_count() const { return ggufguard_mapping_tensor_count(mapping_.get()); }
  std::basic_string_view<unsigned char> data(size_t i) const {
    const void* p = nullptr;
    uint64_t size = 0;
    Check(ggufguard_mapping_tensor_data(mapping_.get(), i, &p, &size));
    return {static_cast<const unsigned char*>(p), static_cast<size_t>(size)};
  }

 private:
  struct Free {
    void operator()(ggufguard_mapping* m) const { ggufguard_mapping_free(m); }
  };
  std::unique_ptr<ggufguard_mapping, Free> mapping_;
};

}  // namespace ggufguard::api

#endif  // GGUFGUARD_GGUFGUARD_HPP_
