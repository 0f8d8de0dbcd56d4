// The chat-template analyser alone (template/scan.h): what it adds to a
// validation, per template and per KiB (docs/performance.md, "Chat
// templates").
//
//   bench/template_bench --benchmark_filter=Template
//
// Real-shaped inputs come from tests/data/chat_templates (the tool-use
// templates, and ChatML as in the SmolLM2-like bench file); adversarial ones
// are built here at 256 KiB and 1 MiB, to show time stays linear in the size.
#include <benchmark/benchmark.h>

#include <fstream>
#include <sstream>
#include <string>

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

BENCHMARK(BM_TemplateChatMl);
BENCHMARK(BM_TemplateLlama31Tools);
BENCHMARK(BM_TemplateToolUse);
BENCHMARK(BM_TemplateAdversarialNesting)->Arg(256)->Arg(1024)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_TemplateAdversarialConcat)->Arg(256)->Arg(1024)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_TemplateAdversarialSetBlocks)->Arg(256)->Arg(1024)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_TemplateAdversarialNestedLoops)->Arg(256)->Arg(1024)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_TemplateAdversarialMacros)->Arg(256)->Arg(1024)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
