// The C API (include/ggufguard/ggufguard.h) over the C++ validator.
//
// Every exported function runs its body through Guard(): no exception, not
// even std::bad_alloc, may unwind into a C caller, whose frames cannot
// handle it. Every getter checks its handle, its key and its index against
// what the report holds before it reads a byte: the key and the index come
// from the caller, who may have them from a hostile file.
#include "ggufguard/ggufguard.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <exception>
#include <limits>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "ggufguard/base/checked_math.h"
#include "ggufguard/base/text.h"
#include "ggufguard/capi/capi_internal.h"
#include "ggufguard/findings/policy.h"
#include "ggufguard/findings/policy_file.h"
#include "ggufguard/findings/rule_catalog.h"
#include "ggufguard/io/source.h"
#include "ggufguard/report/render.h"
#include "ggufguard/split/lone_shard.h"
#include "ggufguard/validate.h"

using ggufguard::ArrayView;
using ggufguard::KeyValue;
using ggufguard::Value;
using ggufguard::ValueType;

namespace ggufguard::capi {

thread_local std::string last_error;

ggufguard_status Fail(ggufguard_status status, std::string_view message) noexcept {
  // Guard's handlers call this too: an allocation failing here must not
  // throw out of a catch block into C, so the message is then dropped.
  try {
    last_error.assign(message.data(), message.size());
  } catch (...) {
    last_error.clear();
  }
  return status;
}

}  // namespace ggufguard::capi

using ggufguard::capi::Fail;
using ggufguard::capi::Guard;

struct ggufguard_policy {
  ggufguard::Policy policy;
};

// A report with everything the getters hand out as C strings held in
// NUL-terminated copies, and the indexes that make getters O(1).
struct ggufguard_report {
  std::optional<ggufguard::ValidatedFile> file;  // from a path or a descriptor: owns the header bytes
  ggufguard::Report buffer_report;               // from a caller's buffer, which it borrows
  const ggufguard::Report* report = nullptr;     // one of the two
  ggufguard::capi::FileIdentity identity;
  // Without an identity: the bytes validated (the caller's buffer, which the
  // report borrows, or a prefix's header, which it holds), for a mapping to
  // compare with the file's.
  absl::Span<const uint8_t> validated_bytes;

  std::vector<std::string> finding_codes;
  std::vector<std::string> finding_names;
  std::vector<std::string> runtime_rules;  // per Report::runtimes entry: its rule's code, or ""
  // The trusted tensor table, copied out of the header once it passed
  // TableRefusal (names point into tensor_names): a buffer report's getters
  // then read nothing more from the caller's bytes. Empty, with the reason in
  // table_refusal, otherwise.
  std::vector<std::string> tensor_names;
  std::vector<ggufguard_tensor> table;
  std::string table_refusal;
  std::vector<std::string> deep_tensor_names;  // one per report->deep.tensors entry
  std::vector<std::string> keys;                       // NUL-terminated copies, file order
  absl::flat_hash_map<std::string_view, size_t> key_index;  // into keys (views of them); first wins
  // For each array of strings (by KV index): where each element's length
  // field starts in its element_bytes. Built once here, so that reading the
  // i-th of 150,000 tokens does not walk the 149,999 before it.
  absl::flat_hash_map<size_t, std::vector<uint64_t>> string_starts;
};

namespace {

const ggufguard::Policy& DefaultPolicyRef() {
  static const ggufguard::Policy* const policy = new ggufguard::Policy(ggufguard::DefaultPolicy());
  return *policy;
}

const ggufguard::Policy& PolicyOf(const ggufguard_policy* p) { return p ? p->policy : DefaultPolicyRef(); }

// The length fields of a string array's elements, walked with every length
// checked against the bytes left; a walk that runs out stops there (the
// parser reported that file as truncated), so the getters see fewer elements.
std::vector<uint64_t> StringStarts(const ArrayView& a) {
  std::vector<uint64_t> starts;
  // Each string's length field starts length_size bytes before its contents.
  a.ForEachString(a.count, [&](uint64_t, std::string_view, uint64_t contents_at) {
    starts.push_back(contents_at - a.elements_offset - a.length_size);
    return true;
  });
  return starts;
}

// Why the tensor table of `report` is not handed out; empty when it keeps
// the promise ggufguard.h makes of it: every tensor's size known and free of
// overflow, its bytes inside the data section and the file, its offset a
// multiple of the alignment, no two sharing a byte. The rules check all of
// this, but a policy may disable or downgrade them (a gatekeeper's choice
// for its verdict); a loader reading the table has not seen that policy, so
// the promise is checked here, on the parsed header, whatever the policy
// said. The mapping relies on it too.
std::string TableRefusal(const ggufguard::Report& report) {
  if (!report.valid()) return "the file is not valid: no tensor table";
  const ggufguard::GgufHeader& h = report.header;
  const std::string why = absl::StrCat("the policy '", ggufguard::EscapeForDisplay(report.policy_name),
                                       "' let the file pass, but no tensor table is handed out: ");
  if (h.tensors.empty()) return "";
  if (!h.data_offset_known || h.alignment == 0 || (h.alignment & (h.alignment - 1)) != 0) {
    return absl::StrCat(why, "the data section's start or alignment is unknown");
  }
  struct Extent {
    uint64_t begin, end;
    size_t index;
  };
  std::vector<Extent> extents;
  extents.reserve(h.tensors.size());
  // A tensor's name is escaped only for a refusal: a valid file has none.
  auto named = [&](size_t i) {
    return absl::StrCat(why, "tensor ", i, " '", ggufguard::EscapeForDisplay(h.tensors[i].name), "'");
  };
  bool in_order = true;
  for (size_t i = 0; i < h.tensors.size(); ++i) {
    const ggufguard::TensorInfo& t = h.tensors[i];
    uint64_t end = 0;
    if (!t.size_known || !t.absolute_known) return absl::StrCat(named(i), " has no computable size or offset");
    if (t.absolute_offset < h.data_offset || !ggufguard::CheckedAdd(t.absolute_offset, t.byte_size, &end) ||
        end > report.file_size) {
      return absl::StrCat(named(i), " lies outside the data section or the file");
    }
    if (t.absolute_offset % h.alignment != 0) return absl::StrCat(named(i), " is not aligned to ", h.alignment);
    if (t.n_dims > ggufguard::kMaxDims) return absl::StrCat(named(i), " has ", t.n_dims, " dimensions");
    in_order &= extents.empty() || extents.back().begin <= t.absolute_offset;
    extents.push_back({t.absolute_offset, end, i});
  }
  // Real writers place tensors in order: sorted already, as the layout rule
  // finds too.
  if (!in_order) {
    std::sort(extents.begin(), extents.end(), [](const Extent& a, const Extent& b) {
      return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
    });
  }
  uint64_t covered_end = 0;  // the furthest byte a tensor before this one reaches
  for (const Extent& e : extents) {
    // A tensor of no bytes shares none, wherever it points.
    if (e.begin < e.end && e.begin < covered_end) {
      return absl::StrCat(named(e.index), " shares bytes with another tensor");
    }
    covered_end = std::max(covered_end, e.end);
  }
  return "";
}

ggufguard_status Finish(std::unique_ptr<ggufguard_report> r, ggufguard_report** out) {
  const ggufguard::Report& report = *r->report;
  r->finding_codes.reserve(report.findings.size());
  r->finding_names.reserve(report.findings.size());
  for (const ggufguard::Finding& f : report.findings) {
    r->finding_codes.push_back(ggufguard::RuleCode(f.rule));
    const ggufguard::RuleInfo* info = ggufguard::FindRule(f.rule);
    r->finding_names.emplace_back(info ? info->name : std::string_view("unknown"));
  }
  for (const ggufguard::RuntimeVerdict& v : report.runtimes) {
    r->runtime_rules.push_back(v.rule ? ggufguard::RuleCode(*v.rule) : std::string());
  }
  r->table_refusal = TableRefusal(report);
  if (r->table_refusal.empty()) {
    const auto& tensors = report.header.tensors;
    r->tensor_names.reserve(tensors.size());
    for (const ggufguard::TensorInfo& t : tensors) r->tensor_names.emplace_back(t.name);
    // After tensor_names stops growing: the table points into its strings.
    r->table.reserve(tensors.size());
    for (size_t i = 0; i < tensors.size(); ++i) {
      const ggufguard::TensorInfo& t = tensors[i];
      ggufguard_tensor entry{};
      entry.name = r->tensor_names[i].c_str();
      entry.name_length = r->tensor_names[i].size();
      entry.ggml_type = t.ggml_type;
      entry.n_dims = t.n_dims;
      const std::array<uint64_t, ggufguard::kMaxDims> dims = t.dims();
      for (size_t d = 0; d < 4; ++d) entry.ne[d] = dims[d];
      entry.offset = t.absolute_offset;
      entry.size = t.byte_size;
      r->table.push_back(entry);
    }
  }
  r->deep_tensor_names.reserve(report.deep.tensors.size());
  for (const ggufguard::DeepTensorResult& t : report.deep.tensors) {
    r->deep_tensor_names.emplace_back(report.header.tensors[t.tensor].name);
  }
  const auto& kvs = report.header.kvs;
  r->keys.reserve(kvs.size());
  for (const KeyValue& kv : kvs) r->keys.emplace_back(kv.key());
  // After `keys` stops growing: the map's views point into its strings.
  r->key_index.reserve(kvs.size());
  for (size_t i = 0; i < kvs.size(); ++i) {
    r->key_index.try_emplace(std::string_view(r->keys[i]), i);
    const Value v = kvs[i].value();
    if (v.type == ValueType::kArray && v.array.element_type == ValueType::kString) {
      r->string_starts.emplace(i, StringStarts(v.array));
    }
  }
  *out = r.release();
  return GGUFGUARD_OK;
}

// A regular file the caller opened, read with pread so that its offset is
// left where the caller had it.
class FdSource final : public ggufguard::ByteSource {
 public:
  FdSource(int fd, uint64_t size) : fd_(fd), size_(size) {}
  uint64_t size() const override { return size_; }
  absl::Status ReadAt(uint64_t offset, absl::Span<uint8_t> out) override {
    return ggufguard::PreadFully(fd_, size_, offset, out, "the descriptor");
  }

 private:
  int fd_;
  uint64_t size_;
};

// A report of one file: a shard of several is inconclusive at best
// (split/lone_shard.h); `path` is its name, nullptr without one.
// `identity` is what a mapping then checks.
ggufguard_status FromValidated(absl::StatusOr<ggufguard::ValidatedFile> file, ggufguard::capi::FileIdentity identity,
                               const char* path, const ggufguard::Policy& policy, ggufguard_report** out) {
  if (!file.ok()) return Fail(GGUFGUARD_ERR_IO, std::string(file.status().message()));
  auto r = std::make_unique<ggufguard_report>();
  r->file.emplace(*std::move(file));
  ggufguard::JudgeLoneShard(r->file->mutable_report(), policy,
                            path ? std::optional<std::string_view>(path) : std::nullopt,
                            path ? ggufguard::LoneShardReason::kOneFile : ggufguard::LoneShardReason::kNoName);
  r->report = &r->file->report();
  r->identity = std::move(identity);
  if (!r->identity.known && r->identity.unproven.empty()) r->validated_bytes = r->file->prefix();
  return Finish(std::move(r), out);
}

// Validates the regular file open on `fd` (`source` reads it), taking the
// identity a mapping will check: the file's stat before the first read,
// which must still hold after the last. A file changed within a timestamp
// tick of now is validated and hashed in one read instead, so that a
// mapping can compare what it maps with the very bytes judged.
ggufguard_status ValidateRegularFile(int fd, ggufguard::ByteSource& source, const char* path,
                                     const ggufguard_policy* policy, const ggufguard::DeepOptions& deep,
                                     ggufguard_report** out) {
  struct stat before, after;
  if (::fstat(fd, &before) != 0) return Fail(GGUFGUARD_ERR_IO, std::strerror(errno));
  const bool settled = ggufguard::capi::TimestampsSettled(before);
  absl::StatusOr<ggufguard::ValidatedFile> file =
      settled ? ggufguard::ValidateSource(source, PolicyOf(policy), {}, deep)
              : ggufguard::ValidateSourceHashed(source, PolicyOf(policy), deep);
  ggufguard::capi::FileIdentity identity = ggufguard::capi::IdentityFrom(before);
  if (file.ok() && !settled) identity.sha256 = file->report().sha256;
  if (::fstat(fd, &after) != 0) {
    identity.unproven = "it could not be looked at again after validation";
  } else if (const std::string changed = ggufguard::capi::IdentityDiffers(identity, after); !changed.empty()) {
    identity.unproven = absl::StrCat("the file changed while it was validated (", changed,
                                     "): the verdict is of bytes no mapping can prove it holds");
  }
  return FromValidated(std::move(file), std::move(identity), path, PolicyOf(policy), out);
}

// A caller's (data, size), NULL allowed for no bytes.
absl::Span<const uint8_t> CallerBytes(const void* data, size_t size) {
  static const uint8_t kEmpty = 0;
  return absl::MakeConstSpan(data ? static_cast<const uint8_t*>(data) : &kEmpty, size);
}

const KeyValue* FindKv(const ggufguard_report* r, const char* key, size_t* index = nullptr) {
  if (r == nullptr || key == nullptr) return nullptr;
  auto it = r->key_index.find(std::string_view(key));
  if (it == r->key_index.end()) return nullptr;
  if (index) *index = it->second;
  return &r->report->header.kvs[it->second];
}

ggufguard_status LookUp(const ggufguard_report* r, const char* key, const KeyValue** kv, size_t* index = nullptr) {
  if (r == nullptr || key == nullptr) return Fail(GGUFGUARD_ERR_INVALID_ARGUMENT, "NULL report or key");
  *kv = FindKv(r, key, index);
  if (*kv == nullptr) return Fail(GGUFGUARD_ERR_NOT_FOUND, absl::StrCat("no key ", key));
  return GGUFGUARD_OK;
}

// A scalar's bytes must be there before Value's readers look at them; in a
// report of a truncated file they may not be.
bool ScalarComplete(const Value& v) {
  const uint32_t size = ggufguard::ScalarSize(v.type);
  return size != 0 && v.bytes.size() >= size;
}

ggufguard_status ReadInt64(const Value& v, int64_t* out) {
  if (!ScalarComplete(v) || v.type == ValueType::kFloat32 || v.type == ValueType::kFloat64) {
    return Fail(GGUFGUARD_ERR_TYPE, "not an integer");
  }
  std::optional<int64_t> s = v.AsSigned();
  if (!s) return Fail(GGUFGUARD_ERR_RANGE, "the value does not fit in int64");
  *out = *s;
  return GGUFGUARD_OK;
}

ggufguard_status ReadUint64(const Value& v, uint64_t* out) {
  if (!ScalarComplete(v) || v.type == ValueType::kFloat32 || v.type == ValueType::kFloat64) {
    return Fail(GGUFGUARD_ERR_TYPE, "not an integer");
  }
  std::optional<uint64_t> u = v.AsUnsigned();
  if (!u) return Fail(GGUFGUARD_ERR_RANGE, "a negative value does not fit in uint64");
  *out = *u;
  return GGUFGUARD_OK;
}

ggufguard_status ReadFloat64(const Value& v, double* out) {
  if (!ScalarComplete(v)) return Fail(GGUFGUARD_ERR_TYPE, "not a float");
  std::optional<double> d = v.AsDouble();
  if (!d) return Fail(GGUFGUARD_ERR_TYPE, "not a float");
  *out = *d;
  return GGUFGUARD_OK;
}

ggufguard_status ReadBool(const Value& v, int* out) {
  if (v.type != ValueType::kBool || !ScalarComplete(v)) return Fail(GGUFGUARD_ERR_TYPE, "not a bool");
  *out = v.bytes[0] != 0 ? 1 : 0;
  return GGUFGUARD_OK;
}

// The index-th element of a fixed-size array as a Value the scalar readers
// take.
ggufguard_status ArrayElement(const ggufguard_report* r, const char* key, uint64_t index, Value* element) {
  const KeyValue* kv;
  if (ggufguard_status s = LookUp(r, key, &kv); s != GGUFGUARD_OK) return s;
  if (kv->type() != ValueType::kArray) return Fail(GGUFGUARD_ERR_TYPE, absl::StrCat(key, " is not an array"));
  const ArrayView a = kv->value().array;
  const uint32_t size = ggufguard::ScalarSize(a.element_type);
  if (size == 0) return Fail(GGUFGUARD_ERR_TYPE, absl::StrCat(key, " is an array of strings or arrays"));
  // Both bounds: the declared count, and the bytes there are (fewer in a
  // truncated file). index * size cannot overflow below the second.
  if (index >= a.count || index >= a.element_bytes.size() / size) {
    return Fail(GGUFGUARD_ERR_RANGE, absl::StrCat("index ", index, " is past the end of ", key));
  }
  element->type = a.element_type;
  element->order = a.order;
  element->bytes = a.element_bytes.subspan(static_cast<size_t>(index) * size, size);
  return GGUFGUARD_OK;
}

// The bodies of ggufguard_validate_path/_fd/_buffer and their _deep forms
// (`deep` disabled for the former).
ggufguard_status ValidatePath(const char* path, const ggufguard_policy* policy, const ggufguard::DeepOptions& deep,
                              ggufguard_report** out) {
  if (out == nullptr) return Fail(GGUFGUARD_ERR_INVALID_ARGUMENT, "NULL out");
  *out = nullptr;
  if (path == nullptr) return Fail(GGUFGUARD_ERR_INVALID_ARGUMENT, "NULL path");
  absl::StatusOr<std::unique_ptr<ggufguard::FileSource>> source = ggufguard::FileSource::Open(path);
  if (!source.ok()) return Fail(GGUFGUARD_ERR_IO, std::string(source.status().message()));
  return ValidateRegularFile((*source)->fd(), **source, path, policy, deep, out);
}

ggufguard_status ValidateFd(int fd, const ggufguard_policy* policy, const ggufguard::DeepOptions& deep,
                            ggufguard_report** out) {
  if (out == nullptr) return Fail(GGUFGUARD_ERR_INVALID_ARGUMENT, "NULL out");
  *out = nullptr;
  struct stat st;
  if (fd < 0 || ::fstat(fd, &st) != 0) return Fail(GGUFGUARD_ERR_IO, absl::StrCat("bad descriptor ", fd));
  if (S_ISREG(st.st_mode)) {
    FdSource source(fd, static_cast<uint64_t>(st.st_size));
    return ValidateRegularFile(fd, source, nullptr, policy, deep, out);
  }
  ggufguard::FdStream stream(fd, absl::StrCat("descriptor ", fd));
  ggufguard::StreamOptions options;
  options.hash = false;  // nobody asked for it
  ggufguard::capi::FileIdentity streamed;
  streamed.unproven = "it was validated as a stream (a pipe): no file holds the bytes that were judged";
  return FromValidated(ggufguard::ValidateStream(stream, PolicyOf(policy), options, deep), std::move(streamed),
                       nullptr, PolicyOf(policy), out);
}

ggufguard_status ValidateBuffer(const void* data, size_t size, const ggufguard_policy* policy,
                                const ggufguard::DeepOptions& deep, ggufguard_report** out) {
  if (out == nullptr) return Fail(GGUFGUARD_ERR_INVALID_ARGUMENT, "NULL out");
  *out = nullptr;
  if (data == nullptr && size != 0) return Fail(GGUFGUARD_ERR_INVALID_ARGUMENT, "NULL data");
  auto r = std::make_unique<ggufguard_report>();
  r->buffer_report = ggufguard::ValidateBytes(CallerBytes(data, size), PolicyOf(policy), deep);
  ggufguard::JudgeLoneShard(r->buffer_report, PolicyOf(policy), std::nullopt, ggufguard::LoneShardReason::kNoName);
  r->report = &r->buffer_report;
  r->validated_bytes = CallerBytes(data, size);
  return Finish(std::move(r), out);
}

// A file's first `size` bytes, validated as `validate --header-only
// --file-size`: the stream machinery already bounds the prefix, checks it
// against the size and words the "needs at least N bytes" error.
ggufguard_status ValidatePrefix(const void* data, size_t size, uint64_t file_size, const ggufguard_policy* policy,
                                ggufguard_report** out) {
  if (out == nullptr) return Fail(GGUFGUARD_ERR_INVALID_ARGUMENT, "NULL out");
  *out = nullptr;
  if (data == nullptr && size != 0) return Fail(GGUFGUARD_ERR_INVALID_ARGUMENT, "NULL data");
  ggufguard::MemoryStream stream(CallerBytes(data, size));
  ggufguard::StreamOptions options;
  options.hash = false;
  options.header_only = true;
  options.file_size = file_size;
  return FromValidated(ggufguard::ValidateStream(stream, PolicyOf(policy), options, {}), {}, nullptr,
                       PolicyOf(policy), out);
}

// The _deep functions' options; as the CLI's --jobs, at most 1024 threads.
ggufguard_status DeepOptionsFor(uint32_t jobs, ggufguard_report** out, ggufguard::DeepOptions* deep) {
  if (out != nullptr) *out = nullptr;
  if (jobs > 1024) return Fail(GGUFGUARD_ERR_INVALID_ARGUMENT, absl::StrCat("jobs is 0 to 1024, not ", jobs));
  deep->enabled = true;
  deep->jobs = jobs;
  return GGUFGUARD_OK;
}

const ggufguard::DeepSummary* DeepOf(const ggufguard_report* report) {
  return report != nullptr && report->report->deep.ran ? &report->report->deep : nullptr;
}

}  // namespace

extern "C" {

const char* ggufguard_version(void) { return GGUFGUARD_VERSION_STRING; }

int ggufguard_report_schema_version(void) { return ggufguard::kReportSchemaVersion; }

const char* ggufguard_rule_catalog_version(void) {
  return Guard<const char*>("", [] {
    static const std::string* const version = new std::string(ggufguard::RuleCatalogVersion());
    return version->c_str();
  });
}

const char* ggufguard_status_name(int status) {
  switch (status) {
    case GGUFGUARD_OK: return "ok";
    case GGUFGUARD_ERR_INVALID_ARGUMENT: return "invalid-argument";
    case GGUFGUARD_ERR_POLICY: return "policy-error";
    case GGUFGUARD_ERR_IO: return "io-error";
    case GGUFGUARD_ERR_NOT_FOUND: return "not-found";
    case GGUFGUARD_ERR_TYPE: return "type-mismatch";
    case GGUFGUARD_ERR_RANGE: return "out-of-range";
    case GGUFGUARD_ERR_NOT_VALID: return "not-valid";
    case GGUFGUARD_ERR_CHANGED: return "file-changed";
    case GGUFGUARD_ERR_NO_MEMORY: return "no-memory";
    case GGUFGUARD_ERR_INTERNAL: return "internal-error";
    default: return "unknown-status";
  }
}

const char* ggufguard_last_error(void) { return ggufguard::capi::last_error.c_str(); }

size_t ggufguard_rule_count(void) { return ggufguard::AllRules().size(); }

ggufguard_status ggufguard_rule_at(size_t index, ggufguard_rule_info* out) {
  return Guard([&] {
    if (out == nullptr) return Fail(GGUFGUARD_ERR_INVALID_ARGUMENT, "NULL out");
    // Rule names and summaries are string literals, so their views end in a
    // NUL; the codes are built once.
    static const std::vector<std::string>* const codes = [] {
      auto* v = new std::vector<std::string>;
      for (const ggufguard::RuleInfo& r : ggufguard::AllRules()) v->push_back(ggufguard::RuleCode(r.id));
      return v;
    }();
    static const std::vector<std::string>* const texts = [] {
      auto* v = new std::vector<std::string>;
      for (const ggufguard::RuleInfo& r : ggufguard::AllRules()) {
        v->emplace_back(r.name);
        v->emplace_back(r.summary);
      }
      return v;
    }();
    if (index >= codes->size()) return Fail(GGUFGUARD_ERR_RANGE, absl::StrCat("no rule ", index));
    const ggufguard::RuleInfo& r = ggufguard::AllRules()[index];
    out->code = (*codes)[index].c_str();
    out->name = (*texts)[2 * index].c_str();
    out->summary = (*texts)[2 * index + 1].c_str();
    out->default_severity = static_cast<int>(r.default_severity);
    out->strict_severity = static_cast<int>(r.strict_severity);
    return GGUFGUARD_OK;
  });
}

ggufguard_status ggufguard_policy_builtin(const char* name, ggufguard_policy** out) {
  return Guard([&] {
    if (out == nullptr) return Fail(GGUFGUARD_ERR_INVALID_ARGUMENT, "NULL out");
    *out = nullptr;
    if (name == nullptr) return Fail(GGUFGUARD_ERR_INVALID_ARGUMENT, "NULL policy name");
    auto p = std::make_unique<ggufguard_policy>();
    if (std::strcmp(name, "default") == 0) {
      p->policy = ggufguard::DefaultPolicy();
    } else if (std::strcmp(name, "strict") == 0) {
      p->policy = ggufguard::StrictPolicy();
    } else {
      return Fail(GGUFGUARD_ERR_INVALID_ARGUMENT, "the built-in policies are \"default\" and \"strict\"");
    }
    *out = p.release();
    return GGUFGUARD_OK;
  });
}

ggufguard_status ggufguard_policy_from_json(const char* json, size_t size, ggufguard_policy** out) {
  return Guard([&] {
    if (out == nullptr) return Fail(GGUFGUARD_ERR_INVALID_ARGUMENT, "NULL out");
    *out = nullptr;
    if (json == nullptr && size != 0) return Fail(GGUFGUARD_ERR_INVALID_ARGUMENT, "NULL policy document");
    absl::StatusOr<ggufguard::Policy> policy =
        ggufguard::ParsePolicyJson(std::string_view(json ? json : "", size), "policy");
    if (!policy.ok()) return Fail(GGUFGUARD_ERR_POLICY, std::string(policy.status().message()));
    auto p = std::make_unique<ggufguard_policy>();
    p->policy = *std::move(policy);
    *out = p.release();
    return GGUFGUARD_OK;
  });
}

void ggufguard_policy_free(ggufguard_policy* policy) { delete policy; }

ggufguard_status ggufguard_validate_path(const char* path, const ggufguard_policy* policy, ggufguard_report** out) {
  return Guard([&] { return ValidatePath(path, policy, {}, out); });
}

ggufguard_status ggufguard_validate_fd(int fd, const ggufguard_policy* policy, ggufguard_report** out) {
  return Guard([&] { return ValidateFd(fd, policy, {}, out); });
}

ggufguard_status ggufguard_validate_buffer(const void* data, size_t size, const ggufguard_policy* policy,
                                           ggufguard_report** out) {
  return Guard([&] { return ValidateBuffer(data, size, policy, {}, out); });
}

ggufguard_status ggufguard_validate_prefix(const void* data, size_t size, uint64_t file_size,
                                           const ggufguard_policy* policy, ggufguard_report** out) {
  return Guard([&] { return ValidatePrefix(data, size, file_size, policy, out); });
}

ggufguard_status ggufguard_validate_path_deep(const char* path, const ggufguard_policy* policy, uint32_t jobs,
                                              ggufguard_report** out) {
  return Guard([&] {
    ggufguard::DeepOptions deep;
    if (ggufguard_status s = DeepOptionsFor(jobs, out, &deep); s != GGUFGUARD_OK) return s;
    return ValidatePath(path, policy, deep, out);
  });
}

ggufguard_status ggufguard_validate_fd_deep(int fd, const ggufguard_policy* policy, uint32_t jobs,
                                            ggufguard_report** out) {
  return Guard([&] {
    ggufguard::DeepOptions deep;
    if (ggufguard_status s = DeepOptionsFor(jobs, out, &deep); s != GGUFGUARD_OK) return s;
    return ValidateFd(fd, policy, deep, out);
  });
}

ggufguard_status ggufguard_validate_buffer_deep(const void* data, size_t size, const ggufguard_policy* policy,
                                                uint32_t jobs, ggufguard_report** out) {
  return Guard([&] {
    ggufguard::DeepOptions deep;
    if (ggufguard_status s = DeepOptionsFor(jobs, out, &deep); s != GGUFGUARD_OK) return s;
    return ValidateBuffer(data, size, policy, deep, out);
  });
}

void ggufguard_report_free(ggufguard_report* report) { delete report; }

int ggufguard_report_valid(const ggufguard_report* report) { return report && report->report->valid() ? 1 : 0; }

uint64_t ggufguard_report_file_size(const ggufguard_report* report) { return report ? report->report->file_size : 0; }

int ggufguard_report_header_only(const ggufguard_report* report) {
  return report && report->report->coverage == ggufguard::Report::Coverage::kHeaderOnly ? 1 : 0;
}

int ggufguard_report_verdict(const ggufguard_report* report) {
  if (report == nullptr) return GGUFGUARD_VERDICT_INVALID;
  switch (report->report->verdict()) {
    case ggufguard::Report::Verdict::kValid: return GGUFGUARD_VERDICT_VALID;
    case ggufguard::Report::Verdict::kInconclusive: return GGUFGUARD_VERDICT_INCONCLUSIVE;
    case ggufguard::Report::Verdict::kInvalid: break;
  }
  return GGUFGUARD_VERDICT_INVALID;
}

size_t ggufguard_report_not_checked_count(const ggufguard_report* report) {
  return report ? report->report->not_checked.size() : 0;
}

const char* ggufguard_report_not_checked_at(const ggufguard_report* report, size_t index) {
  if (report == nullptr || index >= report->report->not_checked.size()) return nullptr;
  return report->report->not_checked[index].c_str();
}

uint32_t ggufguard_report_gguf_version(const ggufguard_report* report) {
  return report ? report->report->header.version : 0;
}

int ggufguard_report_big_endian(const ggufguard_report* report) {
  return report && report->report->header.byte_order == ggufguard::ByteOrder::kBig ? 1 : 0;
}

uint64_t ggufguard_report_findings_suppressed(const ggufguard_report* report) {
  if (report == nullptr) return 0;
  uint64_t total = 0;
  for (const auto& [rule, count] : report->report->suppressed) {
    if (!ggufguard::CheckedAdd(total, count, &total)) return UINT64_MAX;
  }
  return total;
}

size_t ggufguard_finding_count(const ggufguard_report* report) { return report ? report->report->findings.size() : 0; }

ggufguard_status ggufguard_finding_at(const ggufguard_report* report, size_t index, ggufguard_finding* out) {
  return Guard([&] {
    if (report == nullptr || out == nullptr) return Fail(GGUFGUARD_ERR_INVALID_ARGUMENT, "NULL report or out");
    const std::vector<ggufguard::Finding>& findings = report->report->findings;
    if (index >= findings.size()) return Fail(GGUFGUARD_ERR_RANGE, absl::StrCat("no finding ", index));
    const ggufguard::Finding& f = findings[index];
    out->rule = report->finding_codes[index].c_str();
    out->name = report->finding_names[index].c_str();
    out->severity = static_cast<int>(f.severity);
    out->offset = f.offset;
    out->message = f.message.c_str();
    return GGUFGUARD_OK;
  });
}

size_t ggufguard_runtime_count(const ggufguard_report* report) { return report ? report->report->runtimes.size() : 0; }

ggufguard_status ggufguard_runtime_at(const ggufguard_report* report, size_t index, ggufguard_runtime_verdict* out) {
  return Guard([&] {
    if (report == nullptr || out == nullptr) return Fail(GGUFGUARD_ERR_INVALID_ARGUMENT, "NULL report or out");
    const std::vector<ggufguard::RuntimeVerdict>& runtimes = report->report->runtimes;
    if (index >= runtimes.size()) return Fail(GGUFGUARD_ERR_RANGE, absl::StrCat("no runtime verdict ", index));
    const ggufguard::RuntimeVerdict& v = runtimes[index];
    // Names from static tables: NUL-terminated where they are defined.
    out->runtime = ggufguard::ProfileName(v.runtime).data();
    out->verdict = ggufguard::RuntimeVerdictName(v, !report->report->not_checked.empty()).data();
    out->required = v.required ? 1 : 0;
    out->rule = v.rule ? report->runtime_rules[index].c_str() : nullptr;
    out->offset = v.offset;
    out->reason = v.reason.c_str();
    out->judged_at = v.judged_at.c_str();
    return GGUFGUARD_OK;
  });
}

int ggufguard_report_deep_ran(const ggufguard_report* report) { return DeepOf(report) ? 1 : 0; }

uint64_t ggufguard_report_deep_checked_tensors(const ggufguard_report* report) {
  return DeepOf(report) ? DeepOf(report)->checked_tensors : 0;
}

uint64_t ggufguard_report_deep_checked_bytes(const ggufguard_report* report) {
  return DeepOf(report) ? DeepOf(report)->checked_bytes : 0;
}

uint64_t ggufguard_report_deep_bad_values(const ggufguard_report* report) {
  return DeepOf(report) ? DeepOf(report)->bad_values : 0;
}

uint64_t ggufguard_report_deep_unchecked_bytes(const ggufguard_report* report) {
  return DeepOf(report) ? DeepOf(report)->unchecked_bytes : 0;
}

uint64_t ggufguard_report_deep_tensors_suppressed(const ggufguard_report* report) {
  return DeepOf(report) ? DeepOf(report)->tensors_suppressed : 0;
}

size_t ggufguard_deep_tensor_count(const ggufguard_report* report) {
  return DeepOf(report) ? DeepOf(report)->tensors.size() : 0;
}

ggufguard_status ggufguard_deep_tensor_at(const ggufguard_report* report, size_t index, ggufguard_deep_tensor* out) {
  return Guard([&] {
    if (report == nullptr || out == nullptr) return Fail(GGUFGUARD_ERR_INVALID_ARGUMENT, "NULL report or out");
    if (index >= ggufguard_deep_tensor_count(report)) {
      return Fail(GGUFGUARD_ERR_RANGE, absl::StrCat("no deep result ", index));
    }
    const ggufguard::DeepTensorResult& t = report->report->deep.tensors[index];
    const std::string& name = report->deep_tensor_names[index];
    out->name = name.c_str();
    out->name_length = name.size();
    out->tensor = t.tensor;
    out->ggml_type = report->report->header.tensors[t.tensor].ggml_type;
    out->checked_bytes = t.checked_bytes;
    out->bad_values = t.bad_values;
    return GGUFGUARD_OK;
  });
}

int ggufguard_report_tensor_table_trusted(const ggufguard_report* report) {
  return report && report->table_refusal.empty() ? 1 : 0;
}

size_t ggufguard_tensor_count(const ggufguard_report* report) { return report ? report->table.size() : 0; }

ggufguard_status ggufguard_tensor_at(const ggufguard_report* report, size_t index, ggufguard_tensor* out) {
  return Guard([&] {
    if (report == nullptr || out == nullptr) return Fail(GGUFGUARD_ERR_INVALID_ARGUMENT, "NULL report or out");
    if (!report->table_refusal.empty()) return Fail(GGUFGUARD_ERR_NOT_VALID, report->table_refusal);
    if (index >= report->table.size()) return Fail(GGUFGUARD_ERR_RANGE, absl::StrCat("no tensor ", index));
    *out = report->table[index];
    return GGUFGUARD_OK;
  });
}

size_t ggufguard_kv_count(const ggufguard_report* report) { return report ? report->report->header.kvs.size() : 0; }

ggufguard_status ggufguard_kv_at(const ggufguard_report* report, size_t index, const char** key, size_t* key_length,
                                 int* type) {
  return Guard([&] {
    if (report == nullptr) return Fail(GGUFGUARD_ERR_INVALID_ARGUMENT, "NULL report");
    if (index >= report->keys.size()) return Fail(GGUFGUARD_ERR_RANGE, absl::StrCat("no key ", index));
    if (key) *key = report->keys[index].c_str();
    if (key_length) *key_length = report->keys[index].size();
    if (type) *type = static_cast<int>(report->report->header.kvs[index].type());
    return GGUFGUARD_OK;
  });
}

ggufguard_status ggufguard_get_type(const ggufguard_report* report, const char* key, int* type) {
  return Guard([&] {
    const KeyValue* kv;
    if (ggufguard_status s = LookUp(report, key, &kv); s != GGUFGUARD_OK) return s;
    if (type == nullptr) return Fail(GGUFGUARD_ERR_INVALID_ARGUMENT, "NULL out");
    *type = static_cast<int>(kv->type());
    return GGUFGUARD_OK;
  });
}

ggufguard_status ggufguard_get_string(const ggufguard_report* report, const char* key, const char** data,
                                      size_t* length) {
  return Guard([&] {
    const KeyValue* kv;
    if (ggufguard_status s = LookUp(report, key, &kv); s != GGUFGUARD_OK) return s;
    if (data == nullptr || length == nullptr) return Fail(GGUFGUARD_ERR_INVALID_ARGUMENT, "NULL out");
    if (kv->type() != ValueType::kString) return Fail(GGUFGUARD_ERR_TYPE, absl::StrCat(key, " is not a string"));
    *data = reinterpret_cast<const char*>(kv->value().bytes.data());
    *length = kv->value().bytes.size();
    return GGUFGUARD_OK;
  });
}

ggufguard_status ggufguard_get_int64(const ggufguard_report* report, const char* key, int64_t* out) {
  return Guard([&] {
    const KeyValue* kv;
    if (ggufguard_status s = LookUp(report, key, &kv); s != GGUFGUARD_OK) return s;
    if (out == nullptr) return Fail(GGUFGUARD_ERR_INVALID_ARGUMENT, "NULL out");
    return ReadInt64(kv->value(), out);
  });
}

ggufguard_status ggufguard_get_uint64(const ggufguard_report* report, const char* key, uint64_t* out) {
  return Guard([&] {
    const KeyValue* kv;
    if (ggufguard_status s = LookUp(report, key, &kv); s != GGUFGUARD_OK) return s;
    if (out == nullptr) return Fail(GGUFGUARD_ERR_INVALID_ARGUMENT, "NULL out");
    return ReadUint64(kv->value(), out);
  });
}

ggufguard_status ggufguard_get_float64(const ggufguard_report* report, const char* key, double* out) {
  return Guard([&] {
    const KeyValue* kv;
    if (ggufguard_status s = LookUp(report, key, &kv); s != GGUFGUARD_OK) return s;
    if (out == nullptr) return Fail(GGUFGUARD_ERR_INVALID_ARGUMENT, "NULL out");
    return ReadFloat64(kv->value(), out);
  });
}

ggufguard_status ggufguard_get_bool(const ggufguard_report* report, const char* key, int* out) {
  return Guard([&] {
    const KeyValue* kv;
    if (ggufguard_status s = LookUp(report, key, &kv); s != GGUFGUARD_OK) return s;
    if (out == nullptr) return Fail(GGUFGUARD_ERR_INVALID_ARGUMENT, "NULL out");
    return ReadBool(kv->value(), out);
  });
}

ggufguard_status ggufguard_get_array(const ggufguard_report* report, const char* key, int* element_type,
                                     uint64_t* count) {
  return Guard([&] {
    const KeyValue* kv;
    if (ggufguard_status s = LookUp(report, key, &kv); s != GGUFGUARD_OK) return s;
    if (kv->type() != ValueType::kArray) return Fail(GGUFGUARD_ERR_TYPE, absl::StrCat(key, " is not an array"));
    if (element_type) *element_type = static_cast<int>(kv->value().array.element_type);
    if (count) *count = kv->value().array.count;
    return GGUFGUARD_OK;
  });
}

ggufguard_status ggufguard_get_array_string(const ggufguard_report* report, const char* key, uint64_t index,
                                            const char** data, size_t* length) {
  return Guard([&] {
    const KeyValue* kv;
    size_t kv_index = 0;
    if (ggufguard_status s = LookUp(report, key, &kv, &kv_index); s != GGUFGUARD_OK) return s;
    if (data == nullptr || length == nullptr) return Fail(GGUFGUARD_ERR_INVALID_ARGUMENT, "NULL out");
    auto it = report->string_starts.find(kv_index);
    if (it == report->string_starts.end()) {
      return Fail(GGUFGUARD_ERR_TYPE, absl::StrCat(key, " is not an array of strings"));
    }
    if (index >= it->second.size()) {
      return Fail(GGUFGUARD_ERR_RANGE, absl::StrCat("index ", index, " is past the end of ", key));
    }
    // StringStarts checked that the length and the bytes it counts are there.
    const ArrayView a = kv->value().array;
    const uint8_t* p = a.element_bytes.data() + it->second[index];
    const uint64_t n = a.length_size == 4 ? ggufguard::LoadUnsigned<uint32_t>(p, a.order)
                                          : ggufguard::LoadUnsigned<uint64_t>(p, a.order);
    *data = reinterpret_cast<const char*>(p + a.length_size);
    *length = static_cast<size_t>(n);
    return GGUFGUARD_OK;
  });
}

ggufguard_status ggufguard_get_array_int64(const ggufguard_report* report, const char* key, uint64_t index,
                                           int64_t* out) {
  return Guard([&] {
    Value element;
    if (ggufguard_status s = ArrayElement(report, key, index, &element); s != GGUFGUARD_OK) return s;
    if (out == nullptr) return Fail(GGUFGUARD_ERR_INVALID_ARGUMENT, "NULL out");
    return ReadInt64(element, out);
  });
}

ggufguard_status ggufguard_get_array_uint64(const ggufguard_report* report, const char* key, uint64_t index,
                                            uint64_t* out) {
  return Guard([&] {
    Value element;
    if (ggufguard_status s = ArrayElement(report, key, index, &element); s != GGUFGUARD_OK) return s;
    if (out == nullptr) return Fail(GGUFGUARD_ERR_INVALID_ARGUMENT, "NULL out");
    return ReadUint64(element, out);
  });
}

ggufguard_status ggufguard_get_array_float64(const ggufguard_report* report, const char* key, uint64_t index,
                                             double* out) {
  return Guard([&] {
    Value element;
    if (ggufguard_status s = ArrayElement(report, key, index, &element); s != GGUFGUARD_OK) return s;
    if (out == nullptr) return Fail(GGUFGUARD_ERR_INVALID_ARGUMENT, "NULL out");
    return ReadFloat64(element, out);
  });
}

ggufguard_status ggufguard_get_array_bool(const ggufguard_report* report, const char* key, uint64_t index,
                                          int* out) {
  return Guard([&] {
    Value element;
    if (ggufguard_status s = ArrayElement(report, key, index, &element); s != GGUFGUARD_OK) return s;
    if (out == nullptr) return Fail(GGUFGUARD_ERR_INVALID_ARGUMENT, "NULL out");
    return ReadBool(element, out);
  });
}

}  // extern "C"

namespace ggufguard::capi {

const Report* ReportOf(const ggufguard_report* report) { return report ? report->report : nullptr; }
const FileIdentity& IdentityOf(const ggufguard_report* report) { return report->identity; }
absl::Span<const uint8_t> ValidatedBytesOf(const ggufguard_report* report) { return report->validated_bytes; }
const std::vector<ggufguard_tensor>& TableOf(const ggufguard_report* report) { return report->table; }
const std::string& TableRefusalOf(const ggufguard_report* report) { return report->table_refusal; }

}  // namespace ggufguard::capi
