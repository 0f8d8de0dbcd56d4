// Validation speed on realistic headers (Google Benchmark).
//
//   build/bench/bench/validate_bench --benchmark_repetitions=10
//       --benchmark_report_aggregates_only=true   (one command line)
//
// Inputs: smollm2-like.gguf and smollm2-like-4x.gguf (bench/bench_inputs.h),
// looked for in $GGUFGUARD_BENCH_INPUTS, else the build tree's bench-inputs/,
// and written there first when missing or stale; plus a real llama.cpp
// vocabulary file from ../shared ($GGUFGUARD_REAL_GGUF overrides the path),
// skipped with a message when absent.
//
// Per input, in one binary so that the ratios compare like with like:
//   floor/memcpy, floor/memchr   one pass over the header bytes: the floor
//   floor/walk                   a bare bounds-checked walk of the header:
//                                every count and length read and checked
//                                against the bytes that remain, nothing kept
//                                (the least any safe parser does)
//   text_scan/header             ScanTextBulk (UTF-8 and zero bytes) over
//                                the header, the encoding rule's inner loop
//   text_scan/quarter_same,      a quarter of the header per iteration: the
//   text_scan/quarter_rotating   same one, or the four in turn (equal unless
//                                the scan's cost depends on seeing bytes again)
//   parse                        ParseHeader, screening the token array as a
//                                validation asks it to (GG9054 reads it)
//   parse/no_token_screen        ParseHeader alone
//   rules/<family>               each rule family over an already parsed
//                                header (the families of src/ggufguard/rules/rules.h,
//                                in the order a validation runs them, with
//                                the key index and the parse's token screen
//                                built once outside the loop)
//   rules/all                    every family in that order, the key index
//                                included: a validation less its parse and
//                                its report
//   validate/memory              ValidateBytes over the whole file in memory
//   validate/memory_source       ValidateSource over a MemorySource (adds the
//                                prefix copy that a file read would do)
//   validate/path                FileSource::Open + ValidateSource: open,
//                                fstat, pread of the prefix, close
// bytes_per_second counts the header (magic to the end of the tensor
// infos); strings/s counts keys, string values, array strings and tensor
// names; allocs is operator new calls per iteration (this binary replaces
// the global operator new to count them), which shows whether anything is
// allocated per string. docs/performance.md has measured figures.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "bench/bench_inputs.h"
#include "benchmark/benchmark.h"
#include "ggufguard/base/text.h"
#include "ggufguard/io/source.h"
#include "ggufguard/parse/parser.h"
#include "ggufguard/provenance/family.h"
#include "ggufguard/provenance/provenance.h"
#include "ggufguard/rules/loader_rules.h"
#include "ggufguard/rules/rules.h"
#include "ggufguard/runtimes/runtime_rules.h"
#include "ggufguard/validate.h"

// Every operator new in this process, counted. Single-threaded benchmarks,
// so a plain counter; aligned and nothrow forms reach this one or are not
// used by the library.
namespace {
uint64_t g_allocations = 0;
}  // namespace

// GCC 12 sees free() in the replacement operator delete once it is inlined
// next to a new-expression and calls it a mismatch; the pair below is
// consistent (new -> malloc, delete -> free).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

void* operator new(std::size_t n) {
  ++g_allocations;
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) { return ::operator new(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

namespace ggufguard::bench {
namespace {

struct Input {
  std::string name;  // short label used in benchmark names
  std::string path;
  std::vector<uint8_t> file;  // the whole file (tensor data included)
  uint64_t header_bytes = 0;  // magic to the end of the tensor infos
  uint64_t strings = 0;
};

const Policy& BenchPolicy() {
  static const Policy* policy = new Policy(DefaultPolicy());
  return *policy;
}

bool ReadWholeFile(const std::string& path, std::vector<uint8_t>* out) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  std::error_code ec;
  const uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) {
    ::close(fd);
    return false;
  }
  out->resize(size);
  size_t done = 0;
  while (done < size) {
    ssize_t got = ::pread(fd, out->data() + done, size - done, static_cast<off_t>(done));
    if (got <= 0) break;
    done += static_cast<size_t>(got);
  }
  ::close(fd);
  return done == size;
}

uint64_t CountStrings(const GgufHeader& h) {
  uint64_t n = h.tensors.size();
  for (const KeyValue& kv : h.kvs) {
    n += 1;  // the key
    if (kv.type() == ValueType::kString) n += 1;
    if (kv.type() == ValueType::kArray && kv.value().array.element_type == ValueType::kString) {
      n += kv.value().array.count;
    }
  }
  return n;
}

// Loads a file and checks that it is the happy path the numbers claim: parsed
// and valid under the default policy.
std::unique_ptr<Input> LoadInput(std::string name, std::string path) {
  auto in = std::make_unique<Input>();
  in->name = std::move(name);
  in->path = std::move(path);
  if (!ReadWholeFile(in->path, &in->file)) return nullptr;
  Report report = ValidateBytes(in->file, BenchPolicy());
  if (!report.header_parsed) {
    std::fprintf(stderr, "validate_bench: %s: header not parsed; not benchmarked\n", in->path.c_str());
    return nullptr;
  }
  if (!report.valid() || !report.findings.empty()) {
    std::fprintf(stderr, "validate_bench: note: %s has %zu findings (valid: %s)\n", in->path.c_str(),
                 report.findings.size(), report.valid() ? "yes" : "no");
  }
  in->header_bytes = report.header.infos_end;
  in->strings = CountStrings(report.header);
  std::fprintf(stderr, "validate_bench: %-22s %10ju bytes, header %9ju bytes, %7ju strings, %3zu tensors\n",
               in->name.c_str(), static_cast<uintmax_t>(in->file.size()), static_cast<uintmax_t>(in->header_bytes),
               static_cast<uintmax_t>(in->strings), report.header.tensors.size());
  return in;
}

void SetCounters(benchmark::State& state, const Input& in) {
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * in.header_bytes));
  state.counters["strings"] =
      benchmark::Counter(static_cast<double>(in.strings), benchmark::Counter::kIsIterationInvariantRate);
}

absl::Span<const uint8_t> HeaderBytes(const Input& in) {
  return absl::MakeConstSpan(in.file).subspan(0, in.header_bytes);
}

// --- Floors: the least any validator must spend touching the header once. ---

void BM_Memcpy(benchmark::State& state, const Input* in) {
  absl::Span<const uint8_t> header = HeaderBytes(*in);
  std::vector<uint8_t> dst(header.size());
  for (auto _ : state) {
    std::memcpy(dst.data(), header.data(), header.size());
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  SetCounters(state, *in);
}

// memchr for a byte value that never occurs in the header: a full read-only
// pass at the library's vectorised speed.
void BM_Memchr(benchmark::State& state, const Input* in, uint8_t absent) {
  absl::Span<const uint8_t> header = HeaderBytes(*in);
  for (auto _ : state) {
    const void* p = std::memchr(header.data(), absent, header.size());
    benchmark::DoNotOptimize(p);
  }
  SetCounters(state, *in);
}

// A bare bounds-checked walk of a little-endian v2/v3 header: each count
// and length is checked against the bytes that remain before it is used, and
// nothing else is done. String arrays use the parser's chain (a pointer that
// moves by the length field's width and a sum of lengths: see
// parse/parser.cc, WalkStrings), so the floor is as fast as the walk can be.
class BoundsWalk {
 public:
  explicit BoundsWalk(absl::Span<const uint8_t> bytes) : base_(bytes.data()), size_(bytes.size()) {}

  bool Run() {
    uint64_t tensors, kvs;
    if (!Need(24) || std::memcmp(base_, "GGUF", 4) != 0) return false;
    pos_ = 8;
    tensors = U64();
    kvs = U64();
    for (uint64_t i = 0; i < kvs; ++i) {
      if (!String() || !Need(4)) return false;
      if (!Value(U32(), 0)) return false;
    }
    for (uint64_t i = 0; i < tensors; ++i) {
      if (!String() || !Need(4)) return false;
      const uint32_t n_dims = U32();
      if (n_dims > 4 || !Need(8 * uint64_t{n_dims} + 4 + 8)) return false;
      pos_ += 8 * uint64_t{n_dims} + 4 + 8;
    }
    return true;
  }
  uint64_t position() const { return pos_; }

 private:
  bool Need(uint64_t n) const { return n <= size_ - pos_; }
  uint64_t U64() {
    uint64_t v;
    std::memcpy(&v, base_ + pos_, 8);
    pos_ += 8;
    return v;
  }
  uint32_t U32() {
    uint32_t v;
    std::memcpy(&v, base_ + pos_, 4);
    pos_ += 4;
    return v;
  }
  bool String() {
    if (!Need(8)) return false;
    const uint64_t len = U64();
    if (!Need(len)) return false;
    pos_ += len;
    return true;
  }
  static uint64_t ScalarSize(uint32_t type) {
    static constexpr uint8_t kSize[13] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
    return type < 13 ? kSize[type] : 0;
  }
  bool Value(uint32_t type, int depth) {
    if (type == 8) return String();
    if (type != 9) {
      const uint64_t n = ScalarSize(type);
      if (n == 0 || !Need(n)) return false;
      pos_ += n;
      return true;
    }
    if (depth > 4 || !Need(12)) return false;
    const uint32_t element = U32();
    const uint64_t count = U64();
    if (element == 8) return Strings(count);
    if (element == 9) {
      for (uint64_t i = 0; i < count; ++i) {
        if (!Value(9, depth + 1)) return false;
      }
      return true;
    }
    const uint64_t n = ScalarSize(element);
    if (n == 0 || count > (size_ - pos_) / n) return false;
    pos_ += count * n;
    return true;
  }
  bool Strings(uint64_t count) {
    if (count > (size_ - pos_) / 8) return false;
    const uint8_t* fields = base_ + pos_;
    uint64_t lengths = 0;
    for (uint64_t i = 0; i < count; ++i, fields += 8) {
      const uint64_t at = static_cast<uint64_t>(fields - base_) + lengths;
      if (size_ - at < 8) return false;
      uint64_t len;
      std::memcpy(&len, fields + lengths, 8);
      if (len > size_ - at - 8) return false;
      lengths += len;
    }
    pos_ = static_cast<uint64_t>(fields - base_) + lengths;
    return true;
  }

  const uint8_t* base_;
  uint64_t size_;
  uint64_t pos_ = 0;
};

void BM_Walk(benchmark::State& state, const Input* in) {
  for (auto _ : state) {
    BoundsWalk walk(in->file);
    const bool ok = walk.Run();
    benchmark::DoNotOptimize(ok);
    if (!ok || walk.position() != in->header_bytes) {
      state.SkipWithError("the bounds walk did not end where the header does");
      return;
    }
  }
  SetCounters(state, *in);
}

// --- The text scan alone (base/text.h), the encoding rule's inner loop. ---

// One ScanTextBulk pass over the whole header (length fields, numbers and
// all: the same mix of ASCII and multi-byte text as its string arrays).
void BM_TextScan(benchmark::State& state, const Input* in) {
  absl::Span<const uint8_t> header = HeaderBytes(*in);
  for (auto _ : state) {
    TextScan scan = ScanTextBulk(header.data(), header.size());
    benchmark::DoNotOptimize(scan);
  }
  SetCounters(state, *in);
}

// One quarter of the header per iteration: the same quarter each time, or
// the four in turn. The bytes per iteration are the same; the difference is
// what the CPU can learn by seeing the same bytes again (the branch
// predictor learns a branch's outcomes; a cache keeps the bytes). A scan
// whose cost depends on that makes a benchmark of a small header look
// cheaper than a large one (docs/performance.md, "Linear in the header").
void BM_TextScanQuarter(benchmark::State& state, const Input* in, bool rotate) {
  absl::Span<const uint8_t> header = HeaderBytes(*in);
  const size_t quarter = header.size() / 4;
  size_t next = 0;
  for (auto _ : state) {
    TextScan scan = ScanTextBulk(header.data() + next * quarter, quarter);
    benchmark::DoNotOptimize(scan);
    if (rotate) next = (next + 1) % 4;
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * quarter));
}

// --- The validator. ---

void BM_Parse(benchmark::State& state, const Input* in, bool token_screen) {
  StringArrayScreen screen(kTokenArrayKey);
  ParseOptions options{BenchPolicy().limits, /*complete=*/true, token_screen ? &screen : nullptr};
  for (auto _ : state) {
    FindingSink sink(BenchPolicy());
    ParseResult r = ParseHeader(in->file, options, sink);
    benchmark::DoNotOptimize(r.header.infos_end);
  }
  SetCounters(state, *in);
}

// A header parsed once, as a validation parses it (with the token screen),
// and its key index: what the rule families read. (The parser derives the
// layout; no rule writes anything another reads.)
struct Parsed {
  explicit Parsed(const Input& in)
      : parse(ParseHeader(in.file, ParseOptions{BenchPolicy().limits, true, &screen}, parse_sink)),
        view(in.file, nullptr),
        keys(parse.header) {}
  RuleContext Context(FindingSink& sink) { return RuleContext{parse.header, view, sink, BenchPolicy(), &screen}; }

  StringArrayScreen screen{kTokenArrayKey};
  FindingSink parse_sink{BenchPolicy()};
  ParseResult parse;
  FileView view;
  KeyIndex keys;
};

// The families of rules/rules.h, in the order RunHeaderRules and
// RunFileRules (validate.cc) call them.
using Family = void (*)(RuleContext&, const KeyIndex&);
struct NamedFamily {
  const char* name;
  Family run;
};
constexpr NamedFamily kFamilies[] = {
    {"metadata_encoding", [](RuleContext& c, const KeyIndex& k) { CheckMetadataEncoding(c, k); }},
    {"alignment", [](RuleContext& c, const KeyIndex&) { CheckAlignment(c); }},
    {"tensor_infos", [](RuleContext& c, const KeyIndex&) { CheckTensorInfos(c); }},
    {"known_keys", [](RuleContext& c, const KeyIndex& k) { CheckKnownKeys(c, k); }},
    {"tokenizer", [](RuleContext& c, const KeyIndex& k) { CheckTokenizer(c, k); }},
    {"chat_templates",
     [](RuleContext& c, const KeyIndex&) {
       TemplateDigests digests;
       CheckChatTemplates(c, digests);
     }},
    {"resource_use", [](RuleContext& c, const KeyIndex& k) { CheckResourceUse(c, k); }},
    {"loader_asserts", [](RuleContext& c, const KeyIndex& k) { CheckLoaderAsserts(c, k); }},
    {"key_readings",
     [](RuleContext& c, const KeyIndex& k) {
       size_t suppressed = 0;
       const size_t max_list = c.policy.limits.max_list_entries;
       benchmark::DoNotOptimize(FindKeyReadings(c.header, k.groups(), max_list, max_list, &suppressed));
     }},
    {"tensor_allocation", [](RuleContext& c, const KeyIndex&) { CheckTensorAllocation(c); }},
    {"data_layout", [](RuleContext& c, const KeyIndex&) { benchmark::DoNotOptimize(CheckDataLayout(c)); }},
    {"runtimes",
     [](RuleContext& c, const KeyIndex& k) {
       std::vector<RuntimeIssue> issues;
       CheckRuntimes(c, k, &issues);
       benchmark::DoNotOptimize(issues.size());
     }},
};

// One family over the parsed header, with a fresh sink each time (what a
// validation pays).
void BM_RuleFamily(benchmark::State& state, const Input* in, Family family) {
  Parsed p(*in);
  for (auto _ : state) {
    FindingSink sink(BenchPolicy());
    RuleContext ctx = p.Context(sink);
    family(ctx, p.keys);
    benchmark::DoNotOptimize(sink.has_errors());
  }
  SetCounters(state, *in);
}

// The key index alone (KeyGroups: duplicates, collisions, lookups).
void BM_KeyIndex(benchmark::State& state, const Input* in) {
  Parsed p(*in);
  for (auto _ : state) {
    KeyIndex keys(p.parse.header);
    benchmark::DoNotOptimize(keys.arch_info());
  }
  SetCounters(state, *in);
}

// Where each chat template comes from (provenance/provenance.h), alone: the
// share of rules/chat_templates and of validate/memory that issue 37's
// provenance adds, as a ratio within one run (docs/performance.md,
// "Template provenance"). Also ModelFamily(), which the rules compute once.
void BM_TemplateProvenance(benchmark::State& state, const Input* in) {
  Parsed p(*in);
  std::vector<std::string_view> templates;
  for (const KeyValue& kv : p.parse.header.kvs) {
    if (kv.type() == ValueType::kString && IsChatTemplateKey(kv.key())) templates.push_back(kv.value().AsString());
  }
  if (templates.empty()) {
    state.SkipWithError("no chat template");
    return;
  }
  for (auto _ : state) {
    const std::string family = ModelFamily(p.parse.header);
    for (std::string_view t : templates) {
      benchmark::DoNotOptimize(FindUpstream(t, family, BenchPolicy().limits.max_list_entries).match);
    }
  }
  SetCounters(state, *in);
}

// Every family and the key index: a validation less the parse and the report.
void BM_AllRules(benchmark::State& state, const Input* in) {
  Parsed p(*in);
  for (auto _ : state) {
    FindingSink sink(BenchPolicy());
    RuleContext ctx = p.Context(sink);
    const KeyIndex keys(p.parse.header);
    for (const NamedFamily& f : kFamilies) f.run(ctx, keys);
    benchmark::DoNotOptimize(sink.has_errors());
  }
  SetCounters(state, *in);
}

// Heap allocations per iteration of the loop that runs between the calls.
class AllocationCount {
 public:
  AllocationCount() : start_(g_allocations) {}
  void Report(benchmark::State& state) const {
    state.counters["allocs"] = benchmark::Counter(
        static_cast<double>(g_allocations - start_) / static_cast<double>(std::max<int64_t>(state.iterations(), 1)));
  }

 private:
  uint64_t start_;
};

void BM_ValidateMemory(benchmark::State& state, const Input* in) {
  AllocationCount allocs;
  for (auto _ : state) {
    Report r = ValidateBytes(in->file, BenchPolicy());
    benchmark::DoNotOptimize(r.has_errors);
  }
  allocs.Report(state);
  SetCounters(state, *in);
}

// The same validation under named profiles (issue 40): --profile llama.cpp
// against --profile all, whose ratio the issue bounds at 1.5.
void BM_ValidateMemoryProfiles(benchmark::State& state, const Input* in, const char* profile) {
  Policy policy = DefaultPolicy();
  std::string bad;
  if (!NameProfiles({std::string(profile)}, &policy, &bad)) {
    state.SkipWithError("unknown profile");
    return;
  }
  for (auto _ : state) {
    Report r = ValidateBytes(in->file, policy);
    benchmark::DoNotOptimize(r.has_errors);
  }
  SetCounters(state, *in);
}

void BM_ValidateMemorySource(benchmark::State& state, const Input* in) {
  AllocationCount allocs;
  for (auto _ : state) {
    MemorySource source(in->file);
    absl::StatusOr<ValidatedFile> r = ValidateSource(source, BenchPolicy());
    benchmark::DoNotOptimize(r.ok());
  }
  allocs.Report(state);
  SetCounters(state, *in);
}

void BM_ValidatePath(benchmark::State& state, const Input* in) {
  AllocationCount allocs;
  for (auto _ : state) {
    absl::StatusOr<std::unique_ptr<FileSource>> source = FileSource::Open(in->path);
    if (!source.ok()) {
      state.SkipWithError(std::string(source.status().message()).c_str());
      return;
    }
    absl::StatusOr<ValidatedFile> r = ValidateSource(**source, BenchPolicy());
    benchmark::DoNotOptimize(r.ok());
  }
  allocs.Report(state);
  SetCounters(state, *in);
}

void Register(const Input* in) {
  auto name = [&](const char* what) { return std::string(what) + "/" + in->name; };
  benchmark::RegisterBenchmark(name("floor/memcpy").c_str(), BM_Memcpy, in);
  bool present[256] = {};
  for (uint8_t b : HeaderBytes(*in)) present[b] = true;
  int absent = -1;
  for (int b = 255; b >= 0 && absent < 0; --b) {
    if (!present[b]) absent = b;
  }
  if (absent >= 0) {
    benchmark::RegisterBenchmark(name("floor/memchr").c_str(), BM_Memchr, in, static_cast<uint8_t>(absent));
  } else {
    std::fprintf(stderr, "validate_bench: %s uses every byte value: no memchr floor\n", in->name.c_str());
  }
  benchmark::RegisterBenchmark(name("text_scan/header").c_str(), BM_TextScan, in);
  benchmark::RegisterBenchmark(name("text_scan/quarter_same").c_str(), BM_TextScanQuarter, in, false);
  benchmark::RegisterBenchmark(name("text_scan/quarter_rotating").c_str(), BM_TextScanQuarter, in, true);
  benchmark::RegisterBenchmark(name("floor/walk").c_str(), BM_Walk, in);
  benchmark::RegisterBenchmark(name("parse").c_str(), BM_Parse, in, true);
  benchmark::RegisterBenchmark(name("parse/no_token_screen").c_str(), BM_Parse, in, false);
  benchmark::RegisterBenchmark(name("rules/key_index").c_str(), BM_KeyIndex, in);
  for (const NamedFamily& f : kFamilies) {
    benchmark::RegisterBenchmark(name((std::string("rules/") + f.name).c_str()).c_str(), BM_RuleFamily, in, f.run);
  }
  benchmark::RegisterBenchmark(name("rules/template_provenance").c_str(), BM_TemplateProvenance, in);
  benchmark::RegisterBenchmark(name("rules/all").c_str(), BM_AllRules, in);
  benchmark::RegisterBenchmark(name("validate/memory").c_str(), BM_ValidateMemory, in);
  benchmark::RegisterBenchmark(name("validate/memory_source").c_str(), BM_ValidateMemorySource, in);
  benchmark::RegisterBenchmark(name("validate/memory/profile_llama.cpp").c_str(), BM_ValidateMemoryProfiles, in,
                               "llama.cpp");
  benchmark::RegisterBenchmark(name("validate/memory/profile_all").c_str(), BM_ValidateMemoryProfiles, in, "all");
  benchmark::RegisterBenchmark(name("validate/path").c_str(), BM_ValidatePath, in);
}

std::string RealGgufPath() {
  if (const char* env = std::getenv("GGUFGUARD_REAL_GGUF"); env != nullptr && *env != '\0') return env;
  return std::string(GGUFGUARD_SOURCE_DIR) + "/../shared/corpus-real/valid/llamacpp_vocab-gpt-2.gguf";
}

}  // namespace
}  // namespace ggufguard::bench

int main(int argc, char** argv) {
  namespace gb = ggufguard::bench;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;

  const std::string dir = gb::BenchInputDir(GGUFGUARD_BENCH_INPUTS_DEFAULT);
  if (!gb::BenchInputsPresent(dir)) {
    std::fprintf(stderr, "validate_bench: writing the inputs into %s (once)\n", dir.c_str());
    absl::Status s = gb::WriteBenchInputs(dir);
    if (!s.ok()) {
      std::fprintf(stderr, "validate_bench: %s\n", std::string(s.message()).c_str());
      return 1;
    }
  }

  std::vector<std::unique_ptr<gb::Input>> inputs;
  for (const gb::BenchInputFile& f : gb::kBenchInputFiles) {
    std::string file = f.file_name;
    std::string label = file.substr(0, file.size() - std::string(".gguf").size());
    auto in = gb::LoadInput(label, (std::filesystem::path(dir) / f.file_name).string());
    if (in == nullptr) {
      std::fprintf(stderr, "validate_bench: cannot read %s/%s\n", dir.c_str(), f.file_name);
      return 1;
    }
    inputs.push_back(std::move(in));
  }
  const std::string real = gb::RealGgufPath();
  if (std::filesystem::exists(real)) {
    if (auto in = gb::LoadInput("llamacpp-gpt-2", real)) inputs.push_back(std::move(in));
  } else {
    std::fprintf(stderr, "validate_bench: %s not found (set GGUFGUARD_REAL_GGUF): real-file benchmarks skipped\n",
                 real.c_str());
  }
  for (const auto& in : inputs) gb::Register(in.get());

  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
