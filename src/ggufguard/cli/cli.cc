#include "ggufguard/cli/cli.h"

#include <unistd.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "ggufguard/adapter/base_model.h"
#include "ggufguard/io/source.h"
#include "ggufguard/report/cyclonedx.h"
#include "ggufguard/report/markdown.h"
#include "ggufguard/remote/location.h"
#include "ggufguard/report/render.h"
#include "ggufguard/report/sarif.h"
#include "ggufguard/report/triage.h"
#include "ggufguard/split/lone_shard.h"
#include "ggufguard/split/split_set.h"
#include "ggufguard/base/sv.h"
#include "ggufguard/base/text.h"
#include "ggufguard/findings/policy.h"
#include "ggufguard/findings/policy_file.h"
#include "ggufguard/remote/remote_cli.h"
#include "ggufguard/validate.h"

namespace ggufguard {
namespace {

constexpr char kUsage[] =
    "usage: ggufguard validate [--format text|json|sarif|markdown|cyclonedx] [--policy default|strict|FILE.json] [--hash|--no-hash]\n"
    "                          [--profile P]... [--fail-fast] [--header-only [--file-size N]] [--max-bytes N]\n"
    "                          [--deep [--jobs N]] [--suppressions FILE] [--baseline REPORT.json] [--no-set]\n"
    "                          [--token-file FILE] [--connect-timeout S] [--idle-timeout S] [--timeout S] [--min-rate B]\n"
    "                          [--no-siblings] [--base MODEL] FILE... | -\n"
    "       ggufguard scan [--jobs N] [--recursive] [--format jsonl|text|sarif|markdown|cyclonedx] [--policy P] [--profile P]... [--all-files]\n"
    "                      [--follow-symlinks] [--files-from FILE|-] [--null] [--hash] [--deep] [--cache DIR] [--no-siblings] [PATH...]\n"
    "       ggufguard inspect FILE | -\n"
    "       ggufguard rules\n"
    "FILE may be remote: https://HOST/PATH, http://LOOPBACK/PATH, hf://ORG/REPO[@REVISION]/PATH (HF_ENDPOINT,\n"
    "  HF_TOKEN; docs/remote.md); --timeout bounds each remote file (policy: max_remote_seconds, 1800), --min-rate\n"
    "  its slowest transfer (min_remote_bytes_per_second, 8192)\n"
    "exit codes: 0 valid, 1 invalid, 2 usage error, 3 I/O error, 4 internal error,\n"
    "            5 inconclusive (no error, but part of the file was not checked: --header-only, a budget,\n"
    "            a missing shard)\n"
    "A shard named PREFIX-NNNNN-of-NNNNN.gguf is judged with its whole split set (--no-set: that file alone).\n"
    "--base MODEL: each LoRA adapter or control vector is also judged against that base model (its header is read).\n"
    "--profile P: llama.cpp, gguf, ollama, vllm, mistral.rs, candle or all (every runtime), given once or more: the\n"
    "  file must load in each runtime named (a refusal is an error); without it, the report says what each would do.\n"
    "An hf:// file's templates are compared with its repository's chat_template.jinja, chat_template.json and\n"
    "  tokenizer_config.json beside it (--no-siblings: not read; docs/provenance.md).\n";

struct Options {
  std::string command;
  std::string format = "text";
  std::string policy = "default";
  std::vector<std::string> profiles;  // --profile, once or more: override the policy's (llama.cpp by default)
  std::optional<bool> hash;  // default: on for standard input, off for paths
  bool fail_fast = false;
  bool header_only = false;
  uint64_t max_bytes = UINT64_MAX;
  std::optional<uint64_t> file_size;  // --file-size: the whole file's, for a --header-only prefix
  DeepOptions deep;  // --deep, --jobs
  RemoteFlags remote;  // --token-file, --connect-timeout, --idle-timeout, --timeout, --min-rate (remote/remote_cli.h)
  bool no_set = false;  // --no-set: a shard's name does not bring in its split set
  std::vector<std::string> files;
  bool help = false;  // --help after the command: the usage on stdout
  std::string suppressions, baseline;  // report/triage.h
  std::optional<std::string> base;  // --base: the model adapters are judged against (adapter/base_model.h)
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
    bool bad_remote_flag = false;
    if (ParseRemoteFlag(args, &i, &o.remote, err, &bad_remote_flag)) {
      if (bad_remote_flag) return std::nullopt;
    } else if (a == "--format") {
      if (!value(&o.format)) return std::nullopt;
    } else if (a == "--policy") {
      if (!value(&o.policy)) return std::nullopt;
    } else if (a == "--suppressions") {
      if (!value(&o.suppressions)) return std::nullopt;
    } else if (a == "--baseline") {
      if (!value(&o.baseline)) return std::nullopt;
    } else if (a == "--base") {
      std::string v;
      if (!value(&v)) return std::nullopt;
      if (v == "-") {
        err << "ggufguard: --base wants a file or URL; standard input holds the file to validate\n";
        return std::nullopt;
      }
      o.base = v;
    } else if (a == "--profile") {
      std::string v;
      if (!value(&v)) return std::nullopt;
      o.profiles.push_back(v);  // checked with the policy
    } else if (a == "--max-bytes" || a == "--max-stdin-bytes") {  // the second: its name before streaming
      std::string v;
      if (!value(&v)) return std::nullopt;
      if (!absl::SimpleAtoi(v, &o.max_bytes)) {
        err << "ggufguard: " << a << " wants a number of bytes, not '" << EscapeForDisplay(v) << "'\n";
        return std::nullopt;
      }
    } else if (a == "--file-size") {
      std::string v;
      uint64_t n;
      if (!value(&v)) return std::nullopt;
      if (!absl::SimpleAtoi(v, &n)) {
        err << "ggufguard: --file-size wants a number of bytes, not '" << EscapeForDisplay(v) << "'\n";
        return std::nullopt;
      }
      o.file_size = n;
    } else if (a == "--hash") {
      o.hash = true;
    } else if (a == "--no-hash") {
      o.hash = false;
    } else if (a == "--fail-fast") {
      o.fail_fast = true;
    } else if (a == "--header-only") {
      o.header_only = true;
    } else if (a == "--no-set") {
      o.no_set = true;
    } else if (a == "--deep") {
      o.deep.enabled = true;
    } else if (a == "--jobs" || a == "-j") {
      std::string v;
      if (!value(&v)) return std::nullopt;
      if (!absl::SimpleAtoi(v, &o.deep.jobs) || o.deep.jobs == 0 || o.deep.jobs > 1024) {
        err << "ggufguard: " << a << " wants a number of threads from 1 to 1024, not '" << EscapeForDisplay(v) << "'\n";
        return std::nullopt;
      }
    } else if (a == "--help" || a == "-h") {
      o.help = true;
      return o;
    } else if (a == "--") {
      o.files.insert(o.files.end(), args.begin() + static_cast<long>(i) + 1, args.end());
      break;
    } else if (a.size() > 1 && a[0] == '-') {
      err << "ggufguard: unknown option " << EscapeForDisplay(a, kMaxPathBytes) << "\n" << kUsage;
      return std::nullopt;
    } else {
      o.files.push_back(a);
    }
  }
  if (o.file_size && !o.header_only) {
    err << "ggufguard: --file-size describes a --header-only prefix; without --header-only the file is read whole\n"
        << kUsage;
    return std::nullopt;
  }
  // Options that would otherwise be dropped without a word.
  if (o.header_only && o.hash.value_or(false)) {
    err << "ggufguard: --hash digests the whole file, and --header-only reads only its header\n";
    return std::nullopt;
  }
  if (o.header_only && o.deep.enabled) {
    err << "ggufguard: --deep reads the tensor data, and --header-only stops before it\n";
    return std::nullopt;
  }
  if (std::count(o.files.begin(), o.files.end(), "-") > 1) {
    err << "ggufguard: standard input (-) can be read only once\n";
    return std::nullopt;
  }
  return o;
}

}  // namespace

std::optional<Policy> LoadPolicyForCli(const std::string& name, std::ostream& err,
                                       const std::vector<std::string>& profiles, std::string* policy_text) {
  std::optional<Policy> policy;
  if (name == "default") {
    policy = DefaultPolicy();
  } else if (name == "strict") {
    policy = StrictPolicy();
  } else {
    absl::StatusOr<Policy> p = LoadPolicyFile(name, policy_text);
    if (!p.ok()) {
      err << "ggufguard: " << EscapeForDisplay(std::string(p.status().message()), kMaxPathBytes)
          << " (--policy takes default, strict or a JSON policy file)\n";
      return std::nullopt;
    }
    policy = *std::move(p);
  }
  std::string bad;
  if (!profiles.empty() && !NameProfiles(profiles, &*policy, &bad)) {
    err << "ggufguard: unknown profile '" << EscapeForDisplay(bad) << "' (" << ProfileNamesForHelp() << ")\n";
    return std::nullopt;
  }
  return policy;
}

namespace {

// One input's validation: a path through a growing prefix and positioned
// reads; standard input (and any path with --header-only) as a stream read
// forward once, in bounded memory.
struct Validated {
  std::optional<ValidatedFile> file;  // owns the report and the header bytes it borrows
  std::string io_error;
  std::optional<TransferStats> transfer;  // a remote input's cost

  const Report* report() const { return io_error.empty() && file ? &file->report() : nullptr; }
};

// Validates an opened file (a path, or a shard of a split set) as the
// options ask.
absl::StatusOr<ValidatedFile> ValidateOpened(ByteSource& source, const std::string& label, const Policy& policy,
                                             const Options& o) {
  if (o.header_only) {
    // Reads the file forward up to the end of its header, as a stream
    // would; its size is known, so the rules that need only the size run.
    StreamOptions stream_options;
    stream_options.hash = false;
    stream_options.header_only = true;
    stream_options.file_size = o.file_size ? *o.file_size : source.size();
    stream_options.max_bytes = o.max_bytes;
    SourceStream in(source);
    return ValidateStream(in, policy, stream_options, o.deep);
  }
  if (source.size() > o.max_bytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat(label, " holds ", source.size(), " bytes, more than --max-bytes ", o.max_bytes));
  }
  // With the hash, one read: the digest is of the very bytes judged.
  return o.hash.value_or(false) ? ValidateSourceHashed(source, policy, o.deep) : ValidateSource(source, policy, {}, o.deep);
}

std::unique_ptr<Validated> ValidateInput(const std::string& path, const Policy& policy, const Options& o) {
  auto v = std::make_unique<Validated>();
  absl::StatusOr<ValidatedFile> file = absl::UnknownError("not validated");
  if (path == "-") {
    StreamOptions stream_options;
    stream_options.hash = o.hash.value_or(true);
    stream_options.fail_fast = o.fail_fast;
    stream_options.header_only = o.header_only;
    stream_options.file_size = o.file_size;
    stream_options.max_bytes = o.max_bytes;
    FdStream in(STDIN_FILENO, "standard input");
    file = ValidateStream(in, policy, stream_options, o.deep);
  } else if (IsRemoteArgument(path)) {
    RemoteValidation remote = ValidateRemoteArgument(path, policy, o.remote, o.hash.value_or(false), o.header_only,
                                                     o.fail_fast, o.deep);
    if (remote.file.ok()) JudgeSiblingsOf(path, *remote.file, policy, o.remote, FinalLink::kRefuse, &remote.stats);
    v->transfer = remote.stats;
    file = std::move(remote.file);
  } else {
    absl::StatusOr<std::unique_ptr<FileSource>> source = FileSource::Open(path);
    if (!source.ok()) {
      v->io_error = std::string(source.status().message());
      return v;
    }
    file = ValidateOpened(**source, path, policy, o);
  }
  if (!file.ok()) {
    v->io_error = std::string(file.status().message());
    return v;
  }
  v->file = std::move(*file);
  // One file, not its split set: a shard of several is inconclusive at best
  // (split/lone_shard.h). Here for every route: a path whose name is no
  // shard name, --no-set, inspect, standard input, a URL.
  const LoneShardReason reason = path == "-"               ? LoneShardReason::kNoName
                                 : o.command == "validate" ? LoneShardReason::kNoSet
                                                           : LoneShardReason::kOneFile;
  JudgeLoneShard(v->file->mutable_report(), policy,
                 path == "-" ? std::nullopt : std::optional<std::string_view>(path), reason);
  return v;
}

// --base: the base model's facts, from its header; from every shard's when
// it is named as a shard of a split model. nullopt, with the reason on
// `err`, when it cannot be read at all.
std::optional<BaseModel> ReadBaseForCli(const std::string& path, const Policy& policy, const Options& o,
                                        std::ostream& err) {
  Options header_only = o;
  header_only.header_only = true;
  header_only.hash = false;
  header_only.deep = DeepOptions{};
  header_only.file_size.reset();
  BaseModel base;
  base.label = path;
  if (const std::optional<ShardName> shard = ParseShardName(path)) {
    const SetReport set = ValidateSplitSet(
        *shard, policy, RemoteAwareShardOpener(o.remote, policy, LocalShardOpener()),
        [&](ByteSource& source, const std::string& location) {
          return ValidateOpened(source, location, policy, header_only);
        },
        [&](const std::string& location, const Report* report, const std::string&) {
          const std::optional<ShardName> name = ParseShardName(location);
          if (report != nullptr && name) AddBaseShard(base, *report, name->number, shard->count);
        });
    for (const ShardStatus& s : set.shards) {
      if ((s.verdict == "missing" || s.verdict == "io-error") && s.location == path) {
        err << "ggufguard: --base " << EscapeForDisplay(path, kMaxPathBytes) << ": " << s.verdict << "\n";
        return std::nullopt;  // the file named cannot be read, as for a lone file
      }
      if (s.verdict == "missing" || s.verdict == "io-error") {
        base.incomplete.push_back(absl::StrCat("base model shard ", EscapeForDisplay(s.location, kMaxPathBytes),
                                               ": ", s.verdict));
      }
    }
    if (set.shards.empty()) base.incomplete.push_back("no shard of the base model was read");
    return base;
  }
  std::unique_ptr<Validated> v = ValidateInput(path, policy, header_only);
  if (v->report() == nullptr) {
    err << "ggufguard: --base " << EscapeForDisplay(path, kMaxPathBytes) << ": "
        << EscapeForDisplay(v->io_error, kMaxPathBytes) << "\n";
    return std::nullopt;
  }
  AddBaseShard(base, *v->report(), 1, 1);
  return base;
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
  if (!args.empty() && args[0] == "scan") return RunScan({args.begin() + 1, args.end()}, out, err);
  std::optional<Options> o = ParseArgs(args, err);
  if (!o) return kExitUsage;
  if (o->help || o->command == "--help" || o->command == "help" || o->command == "-h") {
    out << kUsage;
    return kExitValid;
  }
  if (o->command == "--version") {
    out << "ggufguard " << kToolVersion << "\n";
    return kExitValid;
  }
  if (o->command == "rules") return ListRules(out);
  if (o->command != "validate" && o->command != "inspect") {
    err << "ggufguard: unknown command '" << EscapeForDisplay(o->command) << "'\n" << kUsage;
    return kExitUsage;
  }
  if (o->files.empty()) {
    err << "ggufguard: no input file (use - for standard input)\n" << kUsage;
    return kExitUsage;
  }
  if (o->format != "text" && o->format != "json" && o->format != "sarif" && o->format != "markdown" &&
      o->format != "cyclonedx") {
    err << "ggufguard: unknown format '" << EscapeForDisplay(o->format)
        << "' (text, json, sarif, markdown or cyclonedx)\n";
    return kExitUsage;
  }
  std::optional<Policy> policy = LoadPolicyForCli(o->policy, err, o->profiles);
  if (!policy) return kExitUsage;
  std::optional<Triage> triage = LoadTriageForCli(o->suppressions, o->baseline, err);
  if (!triage) return kExitUsage;
  if (triage->NeedsHash() && !o->header_only) o->hash = true;  // matching by file hash
  if (!LoadRemoteToken(&o->remote, err)) return kExitUsage;
  std::optional<BaseModel> base;
  if (o->base) {
    base = ReadBaseForCli(*o->base, *policy, *o, err);
    if (!base) return kExitIo;
  }

  // Each file is written out as soon as it is validated and then dropped:
  // memory does not grow with the number of files.
  std::unique_ptr<ReportWriter> writer;
  if (o->command == "inspect") {
    writer = MakeTextWriter(out);
  } else if (o->format == "sarif") {
    writer = MakeSarifWriter(out, *policy);
  } else if (o->format == "json") {
    writer = MakeJsonWriter(out, policy->name);
  } else if (o->format == "markdown") {
    writer = MakeMarkdownWriter(out);
  } else if (o->format == "cyclonedx") {
    writer = MakeCycloneDxWriter(out);
  } else {
    writer = MakeTextWriter(out);
  }
  int code = kExitValid;
  auto emit = [&](const FileOutcome& outcome) {
    code = CombineExitCodes(code, ExitCodeOf(outcome.report));
    if (o->command == "inspect") {
      // inspect also prints the findings, so a reader sees why a header is odd.
      if (outcome.report == nullptr) {
        err << RenderTextFile(outcome) << std::flush;
      } else {
        out << RenderInspect(outcome.label, *outcome.report);
      }
    }
    writer->Add(outcome);
  };
  std::set<std::string> sets_done;  // a set named by several of its shards is judged once
  for (const std::string& path : o->files) {
    const std::optional<ShardName> shard =
        o->no_set || o->command != "validate" || path == "-" ? std::nullopt : ParseShardName(path);
    if (shard) {
      if (!sets_done.insert(shard->SetKey()).second) continue;
      const SetReport set = ValidateSplitSet(
          *shard, *policy, RemoteAwareShardOpener(o->remote, *policy, LocalShardOpener()),
          [&](ByteSource& source, const std::string& location) {
            // A shard's suppressions apply before the set is judged, as a
            // lone file's do before its verdict.
            absl::StatusOr<ValidatedFile> validated = ValidateOpened(source, location, *policy, *o);
            if (validated.ok() && IsHubArgument(location)) {
              JudgeSiblingsOf(location, *validated, *policy, o->remote, FinalLink::kRefuse, nullptr);
            }
            if (validated.ok()) triage->Apply(*policy, location, &validated->mutable_report());
            return validated;
          },
          [&](const std::string& location, const Report* report, const std::string& error) {
            emit(FileOutcome{location, report, error});
          });
      code = CombineExitCodes(code, ExitCodeForVerdict(set.verdict()));
      writer->AddSet(set);
      continue;
    }
    std::unique_ptr<Validated> v = ValidateInput(path, *policy, *o);
    if (v->report() != nullptr && base) JudgeAgainstBase(*v->file, *base, *policy);
    if (v->report() != nullptr) triage->Apply(*policy, path, &v->file->mutable_report());
    emit(FileOutcome{path, v->report(), v->io_error, v->transfer});
  }
  writer->Finish();
  return code;
}

}  // namespace ggufguard
