// `ggufguard scan`: validates every GGUF file under directories and in path
// lists, in parallel, writing each file's result as soon as it is done.
// docs/scale.md shows how a hub runs it; docs/scan.schema.json describes its
// JSON lines.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <functional>
#include <map>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_format.h"
#include "ggufguard/base/text.h"
#include "ggufguard/cli/cli.h"
#include "ggufguard/cli/scan_cache.h"
#include "ggufguard/cli/scan_walk.h"
#include "ggufguard/io/source.h"
#include "ggufguard/report/cyclonedx.h"
#include "ggufguard/report/markdown.h"
#include "ggufguard/remote/location.h"
#include "ggufguard/remote/remote_cli.h"
#include "ggufguard/report/render.h"
#include "ggufguard/report/sarif.h"
#include "ggufguard/report/triage.h"
#include "ggufguard/split/lone_shard.h"
#include "ggufguard/split/split_set.h"
#include "ggufguard/validate.h"
#include "nlohmann/json.hpp"

namespace ggufguard {
namespace {

using Json = nlohmann::ordered_json;
using Clock = std::chrono::steady_clock;

constexpr char kScanUsage[] =
    "usage: ggufguard scan [--jobs N] [--recursive] [--format jsonl|text|sarif|markdown|cyclonedx] [--policy P]\n"
    "                      [--profile P]... [--all-files] [--follow-symlinks] [--files-from FILE|-] [--null] [--hash] [--deep]\n"
    "                      [PATH...] [--suppressions FILE] [--baseline REPORT.json] [--cache DIR]\n"
    "                      [--token-file FILE] [--connect-timeout S] [--idle-timeout S] [--timeout S] [--min-rate B]\n"
    "                      [--no-siblings]\n"
    "Validates every *.gguf and *.llamafile file (every file with --all-files) under each PATH and each path of the\n"
    "--files-from list (one a line, or NUL-separated: detected, or forced with --null), --jobs at a time\n"
    "(default: every core). One result per file as soon as it is done, then a summary. --deep checks\n"
    "each file's tensor data too (one thread per file: the files are the parallelism). Shards named\n"
    "PREFIX-NNNNN-of-NNNNN.gguf are judged together as their split set (one more line per set).\n"
    "A PATH may be a URL or hf://ORG/REPO/FILE, fetched with the token of --token-file or $HF_TOKEN.\n"
    "Each file's chat templates are compared with the chat_template.jinja, chat_template.json and\n"
    "tokenizer_config.json beside it (a local file's directory, an hf:// file's repository directory),\n"
    "links among them followed only with --follow-symlinks; --no-siblings reads none (docs/provenance.md).\n"
    "exit codes: 0 all valid, 1 any invalid, 2 usage error, 3 any I/O error, 5 any inconclusive (and none worse)\n";

struct ScanOptions {
  unsigned jobs = 0;  // 0: every core
  std::string format = "jsonl";
  std::string policy = "default";
  std::vector<std::string> profiles;  // --profile, once or more
  WalkOptions walk;
  std::optional<std::string> files_from;
  std::optional<bool> nul;
  bool hash = false;  // SHA-256 of each whole file
  bool deep = false;  // each file's tensor data, on the file's worker thread
  std::vector<std::string> paths;
  bool help = false;  // --help: the usage on stdout, nothing scanned
  std::string suppressions, baseline;  // report/triage.h
  std::string cache;                   // --cache DIR (cli/scan_cache.h)
  RemoteFlags remote;  // --token-file, --connect-timeout, --idle-timeout, --timeout, --min-rate (remote/remote_cli.h)
};

std::optional<ScanOptions> ParseScanArgs(const std::vector<std::string>& args, std::ostream& err) {
  ScanOptions o;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&]() -> std::optional<std::string> {
      if (i + 1 >= args.size()) {
        err << "ggufguard scan: " << EscapeForDisplay(a) << " needs a value\n" << kScanUsage;
        return std::nullopt;
      }
      return args[++i];
    };
    if (a == "--jobs" || a == "-j") {
      std::optional<std::string> v = value();
      if (!v) return std::nullopt;
      if (!absl::SimpleAtoi(*v, &o.jobs) || o.jobs == 0 || o.jobs > 1024) {
        err << "ggufguard scan: --jobs wants a number from 1 to 1024, not '" << EscapeForDisplay(*v) << "'\n";
        return std::nullopt;
      }
    } else if (a == "--format") {
      std::optional<std::string> v = value();
      if (!v) return std::nullopt;
      o.format = *v;
    } else if (a == "--policy") {
      std::optional<std::string> v = value();
      if (!v) return std::nullopt;
      o.policy = *v;
    } else if (a == "--cache") {
      std::optional<std::string> v = value();
      if (!v) return std::nullopt;
      o.cache = *v;
    } else if (a == "--suppressions" || a == "--baseline") {
      std::optional<std::string> v = value();
      if (!v) return std::nullopt;
      (a == "--baseline" ? o.baseline : o.suppressions) = *v;
    } else if (a == "--profile") {
      std::optional<std::string> v = value();
      if (!v) return std::nullopt;
      o.profiles.push_back(*v);
    } else if (a == "--files-from") {
      if (o.files_from) {
        err << "ggufguard scan: --files-from given twice (one list; join them with cat)\n";
        return std::nullopt;
      }
      o.files_from = value();
      if (!o.files_from) return std::nullopt;
    } else if (a == "--hash") {
      o.hash = true;
    } else if (a == "--deep") {
      o.deep = true;
    } else if (a == "--null" || a == "-0") {
      o.nul = true;
    } else if (a == "--recursive" || a == "-r") {
      o.walk.recursive = true;
    } else if (a == "--all-files") {
      o.walk.all_files = true;
    } else if (a == "--follow-symlinks") {
      o.walk.follow_symlinks = true;
    } else if (a == "--help" || a == "-h") {
      o.help = true;
      return o;
    } else if (bool bad = false; ParseRemoteFlag(args, &i, &o.remote, err, &bad)) {
      if (bad) return std::nullopt;
    } else if (a == "--") {
      o.paths.insert(o.paths.end(), args.begin() + static_cast<long>(i) + 1, args.end());
      break;
    } else if (a.size() > 1 && a[0] == '-') {
      err << "ggufguard scan: unknown option " << EscapeForDisplay(a, kMaxPathBytes) << "\n" << kScanUsage;
      return std::nullopt;
    } else {
      o.paths.push_back(a);
    }
  }
  if (o.format != "jsonl" && o.format != "text" && o.format != "sarif" && o.format != "markdown" &&
      o.format != "cyclonedx") {
    err << "ggufguard scan: unknown format '" << EscapeForDisplay(o.format)
        << "' (jsonl, text, sarif, markdown or cyclonedx)\n";
    return std::nullopt;
  }
  // The cache holds each file's JSON line as validated: what the other
  // formats and the triage options make of a report is not in it.
  if (!o.cache.empty() && (o.format != "jsonl" || !o.suppressions.empty() || !o.baseline.empty())) {
    err << "ggufguard scan: --cache works with --format jsonl, without --suppressions or --baseline\n";
    return std::nullopt;
  }
  if (o.nul && !o.files_from) {
    err << "ggufguard scan: --null describes a --files-from list, and none is given\n";
    return std::nullopt;
  }
  if (o.paths.empty() && !o.files_from) {
    err << "ggufguard scan: nothing to scan (give a PATH or --files-from)\n" << kScanUsage;
    return std::nullopt;
  }
  return o;
}

// A queue of bounded size between the walk and the workers: the walk waits
// when the workers fall behind, so the paths in flight stay few.
class EntryQueue {
 public:
  explicit EntryQueue(size_t capacity) : capacity_(capacity) {}
  void Push(WalkEntry e) {
    std::unique_lock<std::mutex> lock(mu_);
    not_full_.wait(lock, [&] { return q_.size() < capacity_; });
    q_.push_back(std::move(e));
    not_empty_.notify_one();
  }
  void Close() {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
    not_empty_.notify_all();
  }
  std::optional<WalkEntry> Pop() {
    std::unique_lock<std::mutex> lock(mu_);
    not_empty_.wait(lock, [&] { return !q_.empty() || closed_; });
    if (q_.empty()) return std::nullopt;
    WalkEntry e = std::move(q_.front());
    q_.pop_front();
    not_full_.notify_one();
    return e;
  }

 private:
  std::mutex mu_;
  std::condition_variable not_full_, not_empty_;
  std::deque<WalkEntry> q_;
  size_t capacity_;
  bool closed_ = false;
};

struct Totals {
  uint64_t files = 0, valid = 0, invalid = 0, inconclusive = 0, io_errors = 0, skipped = 0, bytes = 0;
  uint64_t sets_valid = 0, sets_invalid = 0, sets_inconclusive = 0;  // split sets judged as models
};

std::string HumanBytes(double b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (b >= 1024 && u < 4) {
    b /= 1024;
    ++u;
  }
  return absl::StrFormat("%.1f %s", b, units[u]);
}

// Everything written: results (out), the progress bar (err), under one lock
// so that lines never interleave and the bar is cleared before a result is
// written to the same terminal.
class Output {
 public:
  Output(const ScanOptions& o, const Policy& policy, std::ostream& out, std::ostream& err, bool progress)
      : o_(o), out_(out), err_(err), progress_(progress), start_(Clock::now()) {
    if (o.format == "sarif") writer_ = MakeSarifWriter(out, policy);
    if (o.format == "text") writer_ = MakeTextWriter(out);
    if (o.format == "markdown") writer_ = MakeMarkdownWriter(out);
    if (o.format == "cyclonedx") writer_ = MakeCycloneDxWriter(out);
  }

  // `not_cached`: under --cache, why this result is not stored (scan_cache.h).
  void Result(const FileOutcome& outcome, uint64_t size, std::string_view not_cached = "") {
    std::lock_guard<std::mutex> lock(mu_);
    ++t_.files;
    t_.bytes += size;
    if (outcome.report == nullptr) {
      ++t_.io_errors;
    } else if (outcome.report->verdict() == Report::Verdict::kValid) {
      ++t_.valid;
    } else if (outcome.report->verdict() == Report::Verdict::kInconclusive) {
      ++t_.inconclusive;
    } else {
      ++t_.invalid;
    }
    ClearBar();
    if (writer_) {
      writer_->Add(outcome);
    } else if (!not_cached.empty()) {
      out_ << ResultCache::NotCached(RenderJsonLine(outcome), not_cached) << std::flush;
    } else {
      out_ << RenderJsonLine(outcome) << std::flush;
    }
    DrawBar(false);
  }

  // A JSON line made elsewhere (--cache): counted as Result counts.
  void Line(const std::string& line, int code, uint64_t size) {
    std::lock_guard<std::mutex> lock(mu_);
    ++t_.files;
    t_.bytes += size;
    (code == kExitIo             ? t_.io_errors
     : code == kExitValid        ? t_.valid
     : code == kExitInconclusive ? t_.inconclusive
                                 : t_.invalid)++;
    ClearBar();
    out_ << line << std::flush;
    DrawBar(false);
  }

  // A split set's verdict, after its shards' Result()s.
  void SetResult(const SetReport& set) {
    std::lock_guard<std::mutex> lock(mu_);
    const Report::Verdict verdict = set.verdict();
    (verdict == Report::Verdict::kValid     ? t_.sets_valid
     : verdict == Report::Verdict::kInvalid ? t_.sets_invalid
                                            : t_.sets_inconclusive)++;
    ClearBar();
    if (writer_) {
      writer_->AddSet(set);
    } else {
      out_ << RenderSetJsonLine(set) << std::flush;
    }
    DrawBar(false);
  }

  void Skipped(const WalkEntry& e) {
    std::lock_guard<std::mutex> lock(mu_);
    ++t_.skipped;
    ClearBar();
    const std::string reason = EscapeForDisplay(e.reason, kMaxPathBytes);
    if (o_.format == "jsonl") {
      out_ << Json{{"type", "skipped"}, {"file", EscapeForDisplay(e.path, kMaxPathBytes)}, {"reason", reason}}.dump()
           << "\n" << std::flush;
    } else if (o_.format == "text") {
      out_ << EscapeLabelForText(e.path) << ": skipped: " << reason << "\n" << std::flush;
    }  // SARIF has no place for a file that was not read; the count is on stderr
    DrawBar(false);
  }

  void Discovered(uint64_t files, uint64_t bytes, bool complete) {
    std::lock_guard<std::mutex> lock(mu_);
    total_files_ = files;
    total_bytes_ = bytes;
    total_known_ = complete;
  }

  Totals Finish(int code) {
    std::lock_guard<std::mutex> lock(mu_);
    ClearBar();
    const double seconds = std::chrono::duration<double>(Clock::now() - start_).count();
    if (writer_) writer_->Finish();
    if (o_.format == "jsonl") {
      out_ << Json{{"type", "summary"},        {"files", t_.files},   {"valid", t_.valid},
                   {"invalid", t_.invalid},    {"inconclusive", t_.inconclusive},
                   {"io_errors", t_.io_errors}, {"skipped", t_.skipped},
                   {"sets", {{"valid", t_.sets_valid}, {"invalid", t_.sets_invalid},
                             {"inconclusive", t_.sets_inconclusive}}},
                   {"bytes", t_.bytes},        {"seconds", seconds},  {"exit_code", code}}
                  .dump()
           << "\n";
    }
    const std::string summary =
        absl::StrFormat("scan: %d files (%d valid, %d invalid, %d inconclusive, %d I/O errors), %d skipped, %s in %.2f s",
                        t_.files, t_.valid, t_.invalid, t_.inconclusive, t_.io_errors, t_.skipped,
                        HumanBytes(static_cast<double>(t_.bytes)),
                        seconds);
    const uint64_t sets = t_.sets_valid + t_.sets_invalid + t_.sets_inconclusive;
    const std::string set_summary =
        sets == 0 ? "" : absl::StrFormat("; %d split sets (%d valid, %d invalid, %d inconclusive)", sets,
                                         t_.sets_valid, t_.sets_invalid, t_.sets_inconclusive);
    if (o_.format == "text") out_ << summary << set_summary << "\n";
    if (o_.format != "text" && o_.format != "jsonl") err_ << summary << set_summary << "\n";
    out_ << std::flush;
    return t_;
  }

 private:
  void ClearBar() {
    if (progress_ && bar_shown_) err_ << "\r\x1b[K" << std::flush;
    bar_shown_ = false;
  }
  // At most ten times a second: files done/total, bytes, rate, ETA.
  void DrawBar(bool force) {
    if (!progress_) return;
    const Clock::time_point now = Clock::now();
    if (!force && now - last_draw_ < std::chrono::milliseconds(100)) {
      return;
    }
    last_draw_ = now;
    const double seconds = std::max(1e-3, std::chrono::duration<double>(now - start_).count());
    const double rate = static_cast<double>(t_.files) / seconds;
    std::string total = total_known_ ? absl::StrCat(total_files_) : absl::StrCat(">=", total_files_);
    std::string eta = "?";
    if (total_known_ && t_.bytes > 0 && total_bytes_ >= t_.bytes) {
      const double left = static_cast<double>(total_bytes_ - t_.bytes) / (static_cast<double>(t_.bytes) / seconds);
      eta = absl::StrFormat("%d:%02d", static_cast<int>(left) / 60, static_cast<int>(left) % 60);
    }
    err_ << absl::StrFormat("\rscan: %d/%s files, %s, %.1f files/s, ETA %s", t_.files, total,
                            HumanBytes(static_cast<double>(t_.bytes)), rate, eta)
         << std::flush;
    bar_shown_ = true;
  }

  const ScanOptions& o_;
  std::ostream& out_;
  std::ostream& err_;
  const bool progress_;
  const Clock::time_point start_;
  std::unique_ptr<ReportWriter> writer_;
  std::mutex mu_;
  Totals t_;
  bool bar_shown_ = false;
  Clock::time_point last_draw_{};
  uint64_t total_files_ = 0, total_bytes_ = 0;
  bool total_known_ = false;
};

// Every root: the PATH arguments, then the --files-from list. Returns false
// when the list could not be opened or read (reported as an I/O error).
// `root` is told which: a PATH argument that is a link is followed (the
// operator named it, as with `find -H`), a listed one only with
// --follow-symlinks (a listing of a bucket names what uploaders made).
bool ForEachRoot(const ScanOptions& o, const std::function<void(const std::string&, bool listed)>& root,
                 const std::function<void(WalkEntry)>& error) {
  for (const std::string& p : o.paths) root(p, false);
  if (!o.files_from) return true;
  std::FILE* in = *o.files_from == "-" ? stdin : std::fopen(o.files_from->c_str(), "rb");
  if (in == nullptr) {
    error(WalkEntry{WalkEntry::Kind::kError, *o.files_from, absl::StrCat("cannot open the --files-from list: ",
                                                                          std::strerror(errno))});
    return false;
  }
  PathListReader reader(in, o.nul);
  while (std::optional<std::string> p = reader.Next()) root(*p, true);
  if (reader.error()) {
    error(WalkEntry{WalkEntry::Kind::kError, *o.files_from,
                    absl::StrCat("cannot read the --files-from list: ", reader.error_message())});
  }
  if (in != stdin) std::fclose(in);
  return !reader.error();
}

// One file's validation as scan does it: one thread, a hash when asked.
absl::StatusOr<ValidatedFile> ValidateForScan(ByteSource& source, const Policy& policy, bool hash, bool deep) {
  const DeepOptions one_thread{.enabled = deep, .jobs = 1};
  // With the hash, one read: the digest is of the very bytes judged.
  return hash ? ValidateSourceHashed(source, policy, one_thread) : ValidateSource(source, policy, {}, one_thread);
}

FileOutcome ValidatePath(const WalkEntry& entry, const Policy& policy, const RemoteFlags& remote_flags, bool hash,
                         bool deep, FinalLink sibling_links, std::optional<ValidatedFile>* keep, std::string* io_error) {
  const std::string& path = entry.path;
  if (IsRemoteArgument(path)) {  // a URL root (remote/remote_cli.h)
    RemoteValidation remote = ValidateRemoteArgument(path, policy, remote_flags, hash, false, false,
                                                     DeepOptions{.enabled = deep, .jobs = 1});
    if (remote.file.ok()) JudgeSiblingsOf(path, *remote.file, policy, remote_flags, sibling_links, &remote.stats);
    if (remote.file.ok()) {
      keep->emplace(*std::move(remote.file));
      // Shard names go the set route; this one is alone (split/lone_shard.h).
      JudgeLoneShard((*keep)->mutable_report(), policy, path, LoneShardReason::kOneFile);
      return FileOutcome{path, &(*keep)->report(), "", remote.stats};
    }
    *io_error = std::string(remote.file.status().message());
    return FileOutcome{path, nullptr, *io_error, remote.stats};
  }
  absl::StatusOr<std::unique_ptr<FileSource>> source =
      FileSource::Open(path, entry.through_link ? FinalLink::kFollow : FinalLink::kRefuse);
  if (source.ok()) {
    absl::StatusOr<ValidatedFile> file = ValidateForScan(**source, policy, hash, deep);
    if (file.ok()) {
      JudgeSiblingsOf(path, *file, policy, remote_flags, sibling_links, nullptr);
      keep->emplace(std::move(*file));
      JudgeLoneShard((*keep)->mutable_report(), policy, path, LoneShardReason::kOneFile);
      return FileOutcome{path, &(*keep)->report(), ""};
    }
    *io_error = std::string(file.status().message());
  } else {
    *io_error = std::string(source.status().message());
  }
  return FileOutcome{path, nullptr, *io_error};
}

// Each split set on one of `jobs` threads, its shards one after another;
// a shard's name found in a directory or a list is opened as the walk would
// open it: refusing a link unless --follow-symlinks.
void JudgeSets(const std::map<std::string, ShardName>& sets, const Policy& policy, const ScanOptions& o,
               const Triage& triage, unsigned jobs, Output& output, const std::function<void(int)>& raise) {
  std::vector<const ShardName*> todo;
  for (const auto& [key, name] : sets) todo.push_back(&name);
  std::atomic<size_t> next{0};
  const ShardOpener open =
      RemoteAwareShardOpener(o.remote, policy, LocalShardOpener(o.walk.follow_symlinks ? FinalLink::kFollow : FinalLink::kRefuse));
  auto work = [&] {
    for (size_t i = next++; i < todo.size(); i = next++) {
      const SetReport set = ValidateSplitSet(
          *todo[i], policy, open,
          [&](ByteSource& source, const std::string& location) {
            // A shard's suppressions apply before the set is judged, as a
            // lone file's do before its verdict.
            absl::StatusOr<ValidatedFile> shard = ValidateForScan(source, policy, o.hash, o.deep);
            if (shard.ok()) {
              JudgeSiblingsOf(location, *shard, policy, o.remote,
                              o.walk.follow_symlinks ? FinalLink::kFollow : FinalLink::kRefuse, nullptr);
              triage.Apply(policy, location, &shard->mutable_report());
            }
            return shard;
          },
          [&](const std::string& location, const Report* report, const std::string& error) {
            raise(ExitCodeOf(report));
            output.Result(FileOutcome{location, report, error}, report ? report->file_size : 0);
          });
      raise(ExitCodeForVerdict(set.verdict()));
      output.SetResult(set);
    }
  };
  std::vector<std::thread> threads;
  for (unsigned j = 1; j < std::min<size_t>(jobs, todo.size()); ++j) threads.emplace_back(work);
  work();
  for (std::thread& t : threads) t.join();
}

WalkOptions RootOptions(WalkOptions walk, bool listed) {
  walk.follow_root_link = !listed;
  return walk;
}

bool IsRegularFile(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

}  // namespace

int RunScan(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  std::optional<ScanOptions> o = ParseScanArgs(args, err);
  if (!o) return kExitUsage;
  if (o->help) {
    out << kScanUsage;
    return kExitValid;
  }
  std::string policy_text;  // a policy file's bytes as parsed, for the cache's key
  std::optional<Policy> policy = LoadPolicyForCli(o->policy, err, o->profiles, &policy_text);
  if (!policy) return kExitUsage;
  if (!LoadRemoteToken(&o->remote, err)) return kExitUsage;
  std::optional<Triage> triage = LoadTriageForCli(o->suppressions, o->baseline, err);
  if (!triage) return kExitUsage;
  if (triage->NeedsHash()) o->hash = true;  // matching by file hash
  std::optional<ResultCache> cache;
  if (!o->cache.empty()) {
    absl::StatusOr<ResultCache> c =
        ResultCache::Open(o->cache, o->policy, o->deep, absl::StrJoin(o->profiles, ","), &policy_text);
    if (!c.ok()) {
      err << "ggufguard scan: " << EscapeForDisplay(std::string(c.status().message()), kMaxPathBytes) << "\n";
      return kExitUsage;
    }
    cache.emplace(*std::move(c));
  }
  const unsigned jobs = o->jobs != 0 ? o->jobs : std::max(1u, std::thread::hardware_concurrency());
  // The bar only where a person watches: our own stderr, on a terminal.
  const bool progress = &err == &std::cerr && ::isatty(STDERR_FILENO) == 1;
  Output output(*o, *policy, out, err, progress);
  std::atomic<int> code{kExitValid};
  auto raise = [&](int c) {
    int cur = code.load();
    while (CombineExitCodes(cur, c) != cur && !code.compare_exchange_weak(cur, CombineExitCodes(cur, c))) {
    }
  };

  EntryQueue queue(4 * static_cast<size_t>(jobs));
  std::vector<std::thread> workers;
  for (unsigned j = 0; j < jobs; ++j) {
    workers.emplace_back([&] {
      while (std::optional<WalkEntry> e = queue.Pop()) {
        if (e->kind == WalkEntry::Kind::kSkipped) {
          output.Skipped(*e);
          continue;
        }
        if (e->kind == WalkEntry::Kind::kError) {
          raise(kExitIo);
          output.Result(FileOutcome{e->path, nullptr, e->reason}, 0);
          continue;
        }
        // A URL goes the remote route even with --cache (issue 38: it was
        // opened as a local path); it is not cached (scan_cache.h).
        if (cache && !IsRemoteArgument(e->path)) {
          const ResultCache::Result r = cache->Scan(*e, *policy);
          raise(r.code);
          output.Line(r.line, r.code, r.size);
          continue;
        }
        // The report and the header bytes it borrows live until the result
        // is written, then go: nothing of a finished file is kept.
        std::optional<ValidatedFile> validated;
        std::string io_error;
        const FileOutcome outcome =
            ValidatePath(*e, *policy, o->remote, o->hash, o->deep,
                         o->walk.follow_symlinks ? FinalLink::kFollow : FinalLink::kRefuse, &validated, &io_error);
        if (validated) triage->Apply(*policy, e->path, &validated->mutable_report());
        raise(ExitCodeOf(outcome.report));
        output.Result(outcome, outcome.report ? outcome.report->file_size : 0,
                      cache ? "a remote file: its digest is known only once all of it is read, and its verdict also "
                              "rests on what its server said; validated, never cached"
                            : "");
      }
    });
  }

  // With a progress bar, a second walk counts what the first will find, so
  // that the bar has a total and an ETA. Only a list that is a regular file
  // can be read twice: from a pipe or a FIFO the second reader would take
  // paths from the first. Otherwise the total grows as the walk goes.
  const bool count_ahead = progress && (!o->files_from || (*o->files_from != "-" && IsRegularFile(*o->files_from)));
  std::thread counter;
  if (count_ahead) {
    counter = std::thread([&] {
      uint64_t files = 0, bytes = 0;
      auto count = [&](WalkEntry e) {
        if (e.kind != WalkEntry::Kind::kFile) return;
        ++files;
        bytes += e.size;
        if (files % 256 == 0) output.Discovered(files, bytes, false);
      };
      ForEachRoot(*o, [&](const std::string& root, bool listed) { Walk(root, RootOptions(o->walk, listed), count); },
                  [](WalkEntry) {});
      output.Discovered(files, bytes, true);
    });
  }
  uint64_t found = 0, found_bytes = 0;
  // Shards of split sets are not queued one by one: each set is judged
  // whole once the walk is done, its shards opened by their names (so a
  // listing that names one shard brings in the set). The map holds one
  // entry per set found, not per shard.
  std::map<std::string, ShardName> sets;
  auto feed = [&](WalkEntry e) {
    if (e.kind == WalkEntry::Kind::kFile) {
      ++found;
      found_bytes += e.size;
      if (!count_ahead) output.Discovered(found, found_bytes, false);
      if (std::optional<ShardName> shard = ParseShardName(e.path)) {
        sets.try_emplace(shard->SetKey(), *std::move(shard));
        return;
      }
    }
    queue.Push(std::move(e));
  };
  ForEachRoot(*o,
              [&](const std::string& root, bool listed) {
                if (IsRemoteArgument(root)) return feed(WalkEntry{WalkEntry::Kind::kFile, root, "", 0, false});
                Walk(root, RootOptions(o->walk, listed), feed);
              },
              feed);
  queue.Close();
  for (std::thread& w : workers) w.join();
  JudgeSets(sets, *policy, *o, *triage, jobs, output, raise);
  if (counter.joinable()) counter.join();
  const int final_code = code.load();
  const Totals totals = output.Finish(final_code);
  if (totals.files == 0) {
    // Exit 0 says every file validated was valid; say when that was none.
    err << "ggufguard scan: no file was validated (" << totals.skipped
        << " skipped; links need --follow-symlinks, subdirectories --recursive)\n";
  }
  return final_code;
}

}  // namespace ggufguard
