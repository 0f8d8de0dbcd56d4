// findings_digest: one line per input file and policy, with a digest of the
// verdict and every finding, so that a change to how files are judged shows
// as the lines it changes (issue 39: "every verdict and finding
// byte-identical before and after").
//
//   findings_digest [--mutants N] [--skip-missing] [--write FILE | --check FILE] LABEL=DIR...
//
// Every regular file under each DIR (recursively, sorted; README and *.md
// files skipped) is validated in memory under each of the policies below,
// and through a file source and a stream as well: the three routes must
// agree (the tool stops with exit 2 and the file's name when they do not,
// which is a bug, not a change). With --mutants N, each file's N mutants
// (fuzz/gguf_mutator.h, seeded as replay_main.cc seeds them: chains of
// mutations, restarted from the file every 4) are validated too, and their
// digests folded into one more line per file and policy.
//
// A line: <LABEL>/<path under DIR>[#mutants<N>] <policy> <verdict> <findings>
// <rules> <digest>, tab-separated; for mutants, verdict is the counts of
// valid/invalid/inconclusive mutants and rules is left out. The digest is the
// first 16 hex digits of the SHA-256 of the verdict, the coverage, every
// finding (rule, severity, offset, message), the counts of findings past the
// per-rule cap and what was not checked.
//
// --skip-missing: a DIR that does not exist ends the run with exit 77 (a
// skipped test: ../shared/corpus-real is not in every checkout).
// --write FILE writes the listing; --check FILE compares it with FILE and
// prints the lines that differ (exit 1), with the command that regenerates
// FILE. Without either, the listing goes to standard output.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "fuzz/gguf_mutator.h"
#include "ggufguard/base/sha256.h"
#include "ggufguard/base/sv.h"
#include "ggufguard/findings/profile.h"
#include "ggufguard/findings/rule_catalog.h"
#include "ggufguard/io/source.h"
#include "ggufguard/read/llamafile.h"
#include "ggufguard/validate.h"

namespace ggufguard {
namespace {

namespace fs = std::filesystem;

struct NamedPolicy {
  std::string name;
  Policy policy;
  DeepOptions deep;
};

// The policies every file is judged under: the default, the strict one, the
// gguf profile, and the default with --deep (the tensor data).
std::vector<NamedPolicy> Policies() {
  std::vector<NamedPolicy> out;
  out.push_back({"default", DefaultPolicy(), {}});
  out.push_back({"strict", StrictPolicy(), {}});
  Policy gguf = DefaultPolicy();
  gguf.profile = *ParseProfile("gguf");
  out.push_back({"gguf", gguf, {}});
  DeepOptions deep;
  deep.enabled = true;
  deep.jobs = 1;
  out.push_back({"default+deep", DefaultPolicy(), deep});
  return out;
}

const char* CoverageName(Report::Coverage c) {
  switch (c) {
    case Report::Coverage::kWholeFile: return "whole-file";
    case Report::Coverage::kHeaderOnly: return "header-only";
    case Report::Coverage::kStoppedAtError: return "stopped-at-error";
    case Report::Coverage::kStoppedAtBudget: return "stopped-at-budget";
  }
  return "?";
}

// Everything the digest covers, as text.
std::string Judgement(const Report& r) {
  std::string out = absl::StrCat(VerdictName(r.verdict()), " ", CoverageName(r.coverage), "\n");
  for (const Finding& f : r.findings) {
    absl::StrAppend(&out, RuleCode(f.rule), " ", Sv(SeverityName(f.severity)), " ", f.offset, " ", f.message, "\n");
  }
  for (const auto& [rule, count] : r.suppressed) absl::StrAppend(&out, "capped ", RuleCode(rule), " ", count, "\n");
  for (const std::string& s : r.not_checked) absl::StrAppend(&out, "not checked: ", s, "\n");
  return out;
}

std::string Digest(const std::string& text) { return Sha256Hex(text).substr(0, 16); }

// The rules that have findings, in ID order, once each ("-" for none).
std::string RuleList(const Report& r) {
  std::set<std::string> rules;
  for (const Finding& f : r.findings) rules.insert(RuleCode(f.rule));
  for (const auto& [rule, count] : r.suppressed) rules.insert(RuleCode(rule));
  std::string out;
  for (const std::string& s : rules) absl::StrAppend(&out, out.empty() ? "" : ",", s);
  return out.empty() ? "-" : out;
}

// A file judged in memory, through a source and as a stream: the
// judgement, which the three must share, or an error naming the route that
// differs.
struct Judged {
  Report report;
  std::string text;
  std::string error;
};

Judged JudgeAllRoutes(const std::vector<uint8_t>& bytes, const NamedPolicy& p) {
  Judged out;
  out.report = ValidateBytes(bytes, p.policy, p.deep);
  out.text = Judgement(out.report);
  MemorySource source(bytes);
  absl::StatusOr<ValidatedFile> by_source = ValidateSource(source, p.policy, {}, p.deep);
  if (!by_source.ok()) {
    out.error = absl::StrCat("the source route failed: ", by_source.status().ToString());
  } else if (Judgement(by_source->report()) != out.text) {
    out.error = absl::StrCat("the source route differs:\n", Judgement(by_source->report()), "memory:\n", out.text);
  }
  MemoryStream stream(bytes);
  StreamOptions options;
  options.hash = false;
  absl::StatusOr<ValidatedFile> by_stream = ValidateStream(stream, p.policy, options, p.deep);
  // A llamafile's GGUF is found from the ZIP at the file's end, which a
  // stream read forward once never reaches (README.md, "Llamafiles":
  // standard input is not opened so): a file with a bad magic, never a pass.
  const bool llamafile = !StartsWithGgufMagic(bytes) &&
                         std::any_of(out.report.findings.begin(), out.report.findings.end(),
                                     [](const Finding& f) { return f.rule == RuleId::kLlamafile; });
  if (out.error.empty() && !by_stream.ok()) {
    out.error = absl::StrCat("the stream route failed: ", by_stream.status().ToString());
  } else if (out.error.empty() && llamafile) {
    if (by_stream->report().verdict() != Report::Verdict::kInvalid) {
      out.error = absl::StrCat("a llamafile read as a stream is not invalid:\n", Judgement(by_stream->report()));
    }
  } else if (out.error.empty() && Judgement(by_stream->report()) != out.text) {
    out.error = absl::StrCat("the stream route differs:\n", Judgement(by_stream->report()), "memory:\n", out.text);
  }
  return out;
}

bool ReadFile(const fs::path& path, std::vector<uint8_t>* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  out->assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return !in.bad();
}

bool Skipped(const fs::path& path) {
  const std::string name = path.filename().string();
  return name.rfind("README", 0) == 0 || path.extension() == ".md";
}

struct Input {
  std::string label;  // LABEL/path under DIR
  fs::path path;
};

// The lines for one file, or false (with a message) when its routes disagree.
bool DigestFile(const Input& in, const std::vector<NamedPolicy>& policies, long mutants,
                std::vector<std::string>* lines) {
  std::vector<uint8_t> bytes;
  if (!ReadFile(in.path, &bytes)) {
    std::fprintf(stderr, "findings_digest: cannot read %s\n", in.path.c_str());
    return false;
  }
  // The mutants are the same for every policy: made once.
  std::vector<std::vector<uint8_t>> mutated;
  if (mutants > 0) {
    const size_t max_size = std::max<size_t>(2 * bytes.size(), 4096);
    std::vector<uint8_t> buf;
    size_t size = 0;
    for (long round = 0; round < mutants; ++round) {
      if (round % 4 == 0) {
        buf = bytes;
        size = bytes.size();
      }
      buf.resize(max_size);
      const auto seed = static_cast<unsigned int>(static_cast<size_t>(round) * 7919u + 1);
      const size_t n = fuzz::MutateGguf(buf.data(), size, max_size, seed);
      if (n != 0) size = n;
      mutated.emplace_back(buf.begin(), buf.begin() + static_cast<long>(size));
    }
  }
  for (const NamedPolicy& p : policies) {
    const Judged j = JudgeAllRoutes(bytes, p);
    if (!j.error.empty()) {
      std::fprintf(stderr, "findings_digest: %s under %s: %s\n", in.label.c_str(), p.name.c_str(), j.error.c_str());
      return false;
    }
    lines->push_back(absl::StrCat(in.label, "\t", p.name, "\t", VerdictName(j.report.verdict()), "\t",
                                  j.report.findings.size(), "\t", RuleList(j.report), "\t", Digest(j.text)));
    if (mutated.empty()) continue;
    std::map<std::string, int> verdicts;
    std::string all;
    for (size_t k = 0; k < mutated.size(); ++k) {
      const Judged m = JudgeAllRoutes(mutated[k], p);
      if (!m.error.empty()) {
        std::fprintf(stderr, "findings_digest: %s mutant %zu under %s: %s\n", in.label.c_str(), k, p.name.c_str(),
                     m.error.c_str());
        return false;
      }
      ++verdicts[VerdictName(m.report.verdict())];
      absl::StrAppend(&all, "mutant ", k, "\n", m.text);
    }
    lines->push_back(absl::StrCat(in.label, "#mutants", mutants, "\t", p.name, "\t", verdicts["valid"], "/",
                                  verdicts["invalid"], "/", verdicts["inconclusive"], "\t-\t-\t", Digest(all)));
  }
  return true;
}

int Usage() {
  std::fprintf(stderr,
               "usage: findings_digest [--mutants N] [--skip-missing] [--write FILE | --check FILE] LABEL=DIR...\n");
  return 2;
}

int Main(int argc, char** argv) {
  long mutants = 0;
  bool skip_missing = false;
  std::string write, check;
  std::vector<Input> inputs;
  std::string command = argv[0];
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--mutants" && i + 1 < argc) {
      mutants = std::strtol(argv[++i], nullptr, 10);
      absl::StrAppend(&command, " --mutants ", mutants);
    } else if (arg == "--skip-missing") {
      skip_missing = true;
    } else if (arg == "--write" && i + 1 < argc) {
      write = argv[++i];
    } else if (arg == "--check" && i + 1 < argc) {
      check = argv[++i];
    } else if (const size_t eq = arg.find('='); eq != std::string::npos && eq > 0) {
      const std::string label = arg.substr(0, eq);
      const fs::path dir = arg.substr(eq + 1);
      absl::StrAppend(&command, " ", arg);
      std::error_code ec;
      if (!fs::is_directory(dir, ec)) {
        std::fprintf(stderr, "findings_digest: %s is not a directory%s\n", dir.c_str(),
                     skip_missing ? ": skipped" : "");
        return skip_missing ? 77 : 2;
      }
      std::vector<Input> found;
      for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
           it.increment(ec)) {
        if (!it->is_regular_file(ec) || Skipped(it->path())) continue;
        found.push_back({absl::StrCat(label, "/", fs::relative(it->path(), dir).generic_string()), it->path()});
      }
      if (ec) {
        std::fprintf(stderr, "findings_digest: cannot walk %s: %s\n", dir.c_str(), ec.message().c_str());
        return 2;
      }
      std::sort(found.begin(), found.end(), [](const Input& a, const Input& b) { return a.label < b.label; });
      inputs.insert(inputs.end(), found.begin(), found.end());
    } else {
      return Usage();
    }
  }
  if (inputs.empty() || (!write.empty() && !check.empty())) return Usage();

  const std::vector<NamedPolicy> policies = Policies();
  std::vector<std::string> lines;
  for (const Input& in : inputs) {
    if (!DigestFile(in, policies, mutants, &lines)) return 2;
  }
  std::string listing;
  for (const std::string& line : lines) absl::StrAppend(&listing, line, "\n");

  if (!write.empty()) {
    std::ofstream out(write, std::ios::binary | std::ios::trunc);
    out << listing;
    return out.good() ? 0 : 2;
  }
  if (check.empty()) {
    std::fwrite(listing.data(), 1, listing.size(), stdout);
    return 0;
  }
  std::ifstream committed_file(check, std::ios::binary);
  if (!committed_file) {
    std::fprintf(stderr, "findings_digest: cannot read %s\n", check.c_str());
    return 2;
  }
  std::vector<std::string> committed;
  for (std::string line; std::getline(committed_file, line);) committed.push_back(line);
  const std::set<std::string> now(lines.begin(), lines.end()), before(committed.begin(), committed.end());
  int differ = 0;
  for (const std::string& line : committed) {
    if (now.count(line) == 0) std::printf("- %s\n", line.c_str()), ++differ;
  }
  for (const std::string& line : lines) {
    if (before.count(line) == 0) std::printf("+ %s\n", line.c_str()), ++differ;
  }
  if (differ == 0) {
    std::printf("findings_digest: %zu lines, as in %s\n", lines.size(), check.c_str());
    return 0;
  }
  std::printf(
      "findings_digest: %d lines differ from %s (- committed, + now). If the change in findings is meant, "
      "regenerate it:\n  %s --write %s\n",
      differ, check.c_str(), command.c_str(), check.c_str());
  return 1;
}

}  // namespace
}  // namespace ggufguard

int main(int argc, char** argv) { return ggufguard::Main(argc, argv); }
