// The chat-template analyser alone (template/scan.h): what it adds to a
// validation, per template and per KiB (docs/performance.md, "Chat
// templates").
//
//   bench/template_bench --benchmark_filter=Template
//
// Real-shaped inputs come from tests/data/chat_templates (the tool-use
// templates, and ChatML as in the SmolLM2-like bench file); adversarial ones
// are built here at 64 KiB, 256 KiB and 1 MiB, to show time stays linear in
// the size: compare us_per_KiB across the sizes of one shape.
#include <benchmark/benchmark.h>

#include <fstream>
#include <iomanip>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "ggufguard/template/scan.h"

namespace {

std::string ReadTemplate(const char* name) {
  std::ifstream in(std::string(GGUFGUARD_SOURCE_DIR) + "/tests/data/chat_templates/benign/" + name, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void Run(benchmark::State& state, const std::string& tmpl) {
  if (tmpl.empty()) {
    state.SkipWithError("template not found");
    return;
  }
  ggufguard::TemplateScanOptions opts;
  opts.max_bytes = uint64_t{1} << 24;
  size_t issues = 0;
  for (auto _ : state) {
    const ggufguard::TemplateScan scan = ggufguard::AnalyseChatTemplate(tmpl, opts);
    issues = scan.issues.size();
    benchmark::DoNotOptimize(issues);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * tmpl.size()));
  state.counters["bytes"] = static_cast<double>(tmpl.size());
  state.counters["issues"] = static_cast<double>(issues);
  state.counters["us_per_KiB"] = benchmark::Counter(
      static_cast<double>(tmpl.size()) / 1024.0 * 1e-6,
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

// Two tool-use templates one after the other: about 25 KiB of the heaviest
// real-shaped code (TypeScript rendering of tool schemas, recursion).
void BM_TemplateToolUse(benchmark::State& state) {
  static const std::string t = ReadTemplate("functionary_typescript.jinja") + ReadTemplate("harmony_typescript_tools.jinja");
  Run(state, t);
}
void BM_TemplateChatMl(benchmark::State& state) {
  static const std::string t = ReadTemplate("chatml_basic.jinja");
  Run(state, t);
}
void BM_TemplateLlama31Tools(benchmark::State& state) {
  static const std::string t = ReadTemplate("llama31_tools.jinja");
  Run(state, t);
}

std::string Repeat(const std::string& unit, size_t bytes) {
  std::string out;
  while (out.size() + unit.size() <= bytes) out += unit;
  return out;
}
// Adversarial sizes come from the benchmark's argument, in KiB.
size_t Bytes(const benchmark::State& state) { return static_cast<size_t>(state.range(0)) << 10; }

void BM_TemplateAdversarialNesting(benchmark::State& state) {
  const std::string t = "{{ " + std::string(Bytes(state), '(');
  Run(state, t);
}
void BM_TemplateAdversarialConcat(benchmark::State& state) {
  const std::string t = "{{ x[" + Repeat("'_' ~ ", Bytes(state)) + "'x'] }}";
  Run(state, t);
}
void BM_TemplateAdversarialSetBlocks(benchmark::State& state) {
  const std::string t = Repeat("{% set a %}{{ a }}_{% endset %}", Bytes(state)) + "{{ x[a] }}";
  Run(state, t);
}
void BM_TemplateAdversarialNestedLoops(benchmark::State& state) {
  const std::string t = [&] {
    std::string s;
    for (int i = 0; i < 200; ++i) s += "{% for i in messages %}{% set ns.a = ns.a ~ 'x' %}";
    s += Repeat("{{ ns.a }}", Bytes(state));
    for (int i = 0; i < 200; ++i) s += "{% endfor %}";
    return "{% set ns = namespace(a='') %}" + s;
  }();
  Run(state, t);
}
void BM_TemplateAdversarialMacros(benchmark::State& state) {
  const std::string t = [&] {
    std::string s;
    for (int i = 0; s.size() < Bytes(state); ++i) {
      s += "{% macro m" + std::to_string(i) + "(a) %}{{ m" + std::to_string(i + 1) + "(a ~ '_') }}{% endmacro %}";
    }
    return s + "{{ m0('x') }}";
  }();
  Run(state, t);
}

// 64 names for one list (`{% set l1 = l0 %}`...), then appends through the
// last: each mutation reaches every alias (30,000 of them took 1.2 s).
void BM_TemplateAdversarialAliasChains(benchmark::State& state) {
  const std::string t = [&] {
    std::string s = "{% set l0 = [] %}";
    for (int i = 1; i < 64; ++i) s += "{% set l" + std::to_string(i) + " = l" + std::to_string(i - 1) + " %}";
    return s + Repeat("{{ l63.append('x') }}", Bytes(state)) + "{{ x[l0[0]] }}";
  }();
  Run(state, t);
}

// Loops that each carry 16 namespace attributes, each set from the next:
// the size model raises a 17 x 17 matrix to the loop's 1000 passes per
// loop (GG8014's growth of carried state; template/extent.h).
void BM_TemplateAdversarialCarriedState(benchmark::State& state) {
  const std::string t = [&] {
    std::string head = "{% set ns = namespace(", unit = "{% for i in range(1000) %}";
    for (int k = 0; k <= 16; ++k) head += (k ? ", a" : "a") + std::to_string(k) + "=''";
    for (int k = 0; k < 16; ++k) {
      unit += "{% set ns.a" + std::to_string(k) + " = ns.a" + std::to_string(k) + " ~ ns.a" + std::to_string(k + 1) + " %}";
    }
    return head + ") %}" + Repeat(unit + "{% endfor %}", Bytes(state));
  }();
  Run(state, t);
}

BENCHMARK(BM_TemplateChatMl);
BENCHMARK(BM_TemplateLlama31Tools);
BENCHMARK(BM_TemplateToolUse);
BENCHMARK(BM_TemplateAdversarialNesting)->Arg(64)->Arg(256)->Arg(1024)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_TemplateAdversarialConcat)->Arg(64)->Arg(256)->Arg(1024)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_TemplateAdversarialSetBlocks)->Arg(64)->Arg(256)->Arg(1024)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_TemplateAdversarialNestedLoops)->Arg(64)->Arg(256)->Arg(1024)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_TemplateAdversarialMacros)->Arg(64)->Arg(256)->Arg(1024)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_TemplateAdversarialAliasChains)->Arg(64)->Arg(256)->Arg(1024)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_TemplateAdversarialCarriedState)->Arg(64)->Arg(256)->Arg(1024)->Unit(benchmark::kMillisecond);

// After the usual console output, the linearity table: for each
// adversarial shape, us_per_KiB at its largest size over that at its
// smallest (1 MiB over 64 KiB), and whether that ratio is within 1.5: a
// cost ratio, which holds on any machine, where a time would not.
class LinearityReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& r : runs) {
      if (r.run_type != Run::RT_Iteration && r.aggregate_name != "median") continue;
      const auto it = r.counters.find("us_per_KiB");
      if (it == r.counters.end() || r.run_name.args.empty()) continue;
      auto& per_size = cost_[r.run_name.function_name];
      per_size[std::stol(r.run_name.args)] = it->second.value;
    }
  }
  void Finalize() override {
    ConsoleReporter::Finalize();
    std::ostream& out = GetOutputStream();
    out << "\nlinearity: us_per_KiB at the largest size / at the smallest (within 1.5 is linear)\n";
    bool all = true;
    for (const auto& [name, per_size] : cost_) {
      if (per_size.size() < 2) continue;
      const auto& [small_kib, small] = *per_size.begin();
      const auto& [large_kib, large] = *per_size.rbegin();
      const double ratio = small > 0 ? large / small : 0;
      const bool linear = ratio <= kMaxRatio;
      all = all && linear;
      out << std::left << std::setw(40) << name << std::right << std::fixed << std::setprecision(2) << std::setw(10)
          << small << " (" << small_kib << " KiB)" << std::setw(10) << large << " (" << large_kib << " KiB)"
          << "  ratio " << ratio << (linear ? "  linear" : "  SUPERLINEAR") << "\n";
    }
    out << (all ? "linearity: every shape within 1.5x\n" : "linearity: some shape beyond 1.5x\n");
  }

 private:
  static constexpr double kMaxRatio = 1.5;
  std::map<std::string, std::map<long, double>> cost_;
};

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  LinearityReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}
