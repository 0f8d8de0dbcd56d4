#include "ggufguard/cli/cli.h"

#include <unistd.h>

#include <memory>
#include <optional>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "ggufguard/io/source.h"
#include "ggufguard/report/render.h"
#include "ggufguard/report/sarif.h"
#include "ggufguard/findings/policy.h"
#include "ggufguard/findings/policy_file.h"
#include "ggufguard/validate.h"

namespace ggufguard {
namespace {

constexpr char kUsage[] =
    "usage: ggufguard validate [--format text|json|sarif] [--policy default|strict|FILE.json] [--max-stdin-bytes N]\n"
    "                          FILE... | -\n"
    "       ggufguard inspect FILE | -\n"
    "       ggufguard rules\n"
    "exit codes: 0 valid, 1 invalid, 2 usage error, 3 I/O error, 4 internal error\n";

struct Options {
  std::string command;
  std::string format = "text";
  std::string policy = "default";
  uint64_t max_stdin_bytes = uint64_t{1} << 30;
  std::vector<std::string> files;
};

// A hand-written parser: absl::flags exits the process on a bad flag, and our
// exit codes are our API.
std::optional<Options> ParseArgs(const std::vector<std::string>& args, std::ostream& err) {
  Options o;
  if (args.empty()) {
    err << kUsage;
    return std::nullopt;
  }
  o.command = args[0];
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&](std::string* dst) {
      if (i + 1 >= args.size()) {
        err << "ggufguard: " << a << " needs a value\n" << kUsage;
        return false;
      }
      *dst = args[++i];
      return true;
    };
    if (a == "--format") {
      if (!value(&o.format)) return std::nullopt;
    } else if (a == "--policy") {
      if (!value(&o.policy)) return std::nullopt;
    } else if (a == "--max-stdin-bytes") {
      std::string v;
      if (!value(&v)) return std::nullopt;
      if (!absl::SimpleAtoi(v, &o.max_stdin_bytes)) {
        err << "ggufguard: --max-stdin-bytes wants a number of bytes, not '" << v << "'\n";
        return std::nullopt;
      }
    } else if (a == "--") {
      o.files.insert(o.files.end(), args.begin() + static_cast<long>(i) + 1, args.end());
      break;
    } else if (a.size() > 1 && a[0] == '-') {
      err << "ggufguard: unknown option " << a << "\n" << kUsage;
      return std::nullopt;
    } else {
      o.files.push_back(a);
    }
  }
  return o;
}

// A built-in name, or a policy file (docs/policy.md) whose errors are usage
// errors: a gatekeeper must not run with a policy it misread.
std::optional<Policy> LoadPolicy(const std::string& name, std::ostream& err) {
  if (name == "default") return DefaultPolicy();
  if (name == "strict") return StrictPolicy();
  absl::StatusOr<Policy> p = LoadPolicyFile(name);
  if (p.ok()) return *std::move(p);
  err << "ggufguard: " << p.status().message() << " (--policy takes default, strict or a JSON policy file)\n";
  return std::nullopt;
}

// One input's validation: a file through a growing prefix, or standard input
// read whole under a cap.
struct Validated {
  std::vector<uint8_t> stdin_bytes;       // owns the bytes for "-"
  std::optional<ValidatedFile> from_file; // owns the prefix for a path
  Report stdin_report;
  std::string io_error;

  const Report* report() const {
    if (!io_error.empty()) return nullptr;
    return from_file ? &from_file->report() : &stdin_report;
  }
};

std::unique_ptr<Validated> ValidateInput(const std::string& path, const Policy& policy, const Options& o) {
  auto v = std::make_unique<Validated>();
  if (path == "-") {
    absl::StatusOr<std::vector<uint8_t>> bytes = ReadStream(STDIN_FILENO, o.max_stdin_bytes);
    if (!bytes.ok()) {
      v->io_error = std::string(bytes.status().message());
      return v;
    }
    v->stdin_bytes = std::move(*bytes);
    v->stdin_report = ValidateBytes(v->stdin_bytes, policy);
    return v;
  }
  absl::StatusOr<std::unique_ptr<FileSource>> source = FileSource::Open(path);
  if (!source.ok()) {
    v->io_error = std::string(source.status().message());
    return v;
  }
  absl::StatusOr<ValidatedFile> file = ValidateSource(**source, policy);
  if (!file.ok()) {
    v->io_error = std::string(file.status().message());
    return v;
  }
  v->from_file = std::move(*file);
  return v;
}

int ListRules(std::ostream& out) {
  for (const RuleInfo& r : AllRules()) {
    out << RuleCode(r.id) << "  " << r.name << "  default=" << SeverityName(r.default_severity)
        << " strict=" << SeverityName(r.strict_severity) << "  " << r.summary << "\n";
  }
  return kExitValid;
}

}  // namespace

int RunCli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  std::optional<Options> o = ParseArgs(args, err);
  if (!o) return kExitUsage;
  if (o->command == "--help" || o->command == "help" || o->command == "-h") {
    out << kUsage;
    return kExitValid;
  }
  if (o->command == "--version") {
    out << "ggufguard " << kToolVersion << "\n";
    return kExitValid;
  }
  if (o->command == "rules") return ListRules(out);
  if (o->command != "validate" && o->command != "inspect") {
    err << "ggufguard: unknown command '" << o->command << "'\n" << kUsage;
    return kExitUsage;
  }
  if (o->files.empty()) {
    err << "ggufguard: no input file (use - for standard input)\n" << kUsage;
    return kExitUsage;
  }
  if (o->format != "text" && o->format != "json" && o->format != "sarif") {
    err << "ggufguard: unknown format '" << o->format << "' (text, json or sarif)\n";
    return kExitUsage;
  }
  std::optional<Policy> policy = LoadPolicy(o->policy, err);
  if (!policy) return kExitUsage;

  std::vector<std::unique_ptr<Validated>> results;
  std::vector<FileOutcome> outcomes;
  int code = kExitValid;
  for (const std::string& path : o->files) {
    results.push_back(ValidateInput(path, *policy, *o));
    const Validated& v = *results.back();
    outcomes.push_back(FileOutcome{path, v.report(), v.io_error});
    if (v.report() == nullptr) {
      code = std::max<int>(code, kExitIo);
    } else if (!v.report()->valid()) {
      code = std::max<int>(code, kExitInvalid);
    }
  }
  if (o->command == "inspect") {
    for (const FileOutcome& f : outcomes) {
      if (f.report == nullptr) {
        err << f.label << ": I/O error: " << f.io_error << "\n";
      } else {
        out << RenderInspect(f.label, *f.report);
      }
    }
    // inspect also prints the findings, so a reader sees why a header is odd.
    out << RenderText(outcomes);
    return code;
  }
  if (o->format == "sarif") {
    out << RenderSarif(outcomes, *policy);
  } else {
    out << (o->format == "json" ? RenderJson(outcomes, policy->name) : RenderText(outcomes));
  }
  return code;
}

}  // namespace ggufguard
