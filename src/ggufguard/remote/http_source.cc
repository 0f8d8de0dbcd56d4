#include "ggufguard/remote/http_source.h"

#include "ggufguard/remote/curl_api.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <mutex>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "ggufguard/base/checked_math.h"
#include "ggufguard/base/text.h"
#include "ggufguard/remote/location.h"
#include "ggufguard/remote/text_util.h"
#include "ggufguard/base/sv.h"

namespace ggufguard {
namespace {

using namespace remote_text;

// Every response's headers together; curl bounds each line, this the sum.
constexpr uint64_t kMaxHeaderBytes = uint64_t{256} << 10;

// What one response said, and where its body goes.
struct Response {
  int status = 0;
  std::optional<std::string> content_range;
  std::optional<std::string> linked_size;
  std::optional<std::string> linked_etag;
  std::optional<std::string> content_encoding;  // any but "identity" is refused
  uint64_t header_bytes = 0;
  uint64_t body_bytes = 0;  // received, kept or not
  // Why a callback stopped the transfer, when one did.
  bool over_budget = false;
  bool headers_too_big = false;
  bool too_long = false;       // more body than asked for
  bool refused_status = false;  // a body on an answer other than 206: not read
  bool refused_encoding = false;  // a body under a Content-Encoding: not read
  // The caller's budget: stats->bytes may not pass max_bytes.
  TransferStats* stats = nullptr;
  uint64_t max_bytes = UINT64_MAX;

  void Reset() {
    TransferStats* s = stats;
    const uint64_t m = max_bytes;
    *this = Response{};
    stats = s;
    max_bytes = m;
  }
  // Counts `n` received bytes; false when the budget is spent.
  bool Count(size_t n) {
    stats->bytes = SatAdd(stats->bytes, n);
    if (stats->bytes > max_bytes) over_budget = true;
    return !over_budget;
  }
};

size_t OnHeader(char* p, size_t size, size_t n, void* user) {
  Response& r = *static_cast<Response*>(user);
  const size_t len = size * n;
  r.header_bytes += len;
  if (!r.Count(len)) return 0;
  if (r.header_bytes > kMaxHeaderBytes) {
    r.headers_too_big = true;
    return 0;
  }
  const std::string_view line = Strip(std::string_view(p, len));
  if (StartsWithIgnoreCase(line, "HTTP/")) {
    // A new response (curl reports 1xx ones too): forget the last one's.
    const uint64_t header_bytes = r.header_bytes;
    const bool over = r.over_budget;
    TransferStats* stats = r.stats;
    const uint64_t max = r.max_bytes;
    r = Response{};
    r.header_bytes = header_bytes;
    r.over_budget = over;
    r.stats = stats;
    r.max_bytes = max;
    std::vector<std::string_view> fields = Split(line, ' ', 3);
    uint64_t status = 0;
    if (fields.size() >= 2 && fields[1].size() == 3 && ParseU64(fields[1], &status)) r.status = static_cast<int>(status);
    return len;
  }
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos) return len;
  const std::string_view name = line.substr(0, colon);
  const std::string value(Strip(line.substr(colon + 1)));
  if (EqualsIgnoreCase(name, "Content-Range")) r.content_range = value;
  if (EqualsIgnoreCase(name, "X-Linked-Size")) r.linked_size = value;
  if (EqualsIgnoreCase(name, "X-Linked-Etag")) r.linked_etag = value;
  if (EqualsIgnoreCase(name, "Content-Encoding") && !EqualsIgnoreCase(value, "identity")) r.content_encoding = value;
  // Chunks are undone by libcurl; a transfer coding beside them (gzip,
  // chunked) would leave coded bytes, refused as a content coding is.
  if (EqualsIgnoreCase(name, "Transfer-Encoding") && !EqualsIgnoreCase(value, "chunked") &&
      !EqualsIgnoreCase(value, "identity")) {
    r.content_encoding = absl::StrCat("Transfer-Encoding ", value);
  }
  return len;
}

// A range request's body: into [dst, dst + capacity), never past it.
struct RangeSink {
  Response response;
  uint8_t* dst = nullptr;
  size_t capacity = 0;
  size_t got = 0;
};

size_t OnRangeBody(char* p, size_t size, size_t n, void* user) {
  RangeSink& sink = *static_cast<RangeSink*>(user);
  Response& r = sink.response;
  const size_t len = size * n;
  r.body_bytes += len;
  if (!r.Count(len)) return 0;
  if (r.status != 206) {
    // A 200 would be the whole file, an error page is not the file: the
    // body is not read, and the status says what happened.
    r.refused_status = true;
    return 0;
  }
  if (r.content_encoding) {
    // Compressed (or otherwise encoded) bytes are not the file's: judged
    // as they came they would be another file's verdict.
    r.refused_encoding = true;
    return 0;
  }
  if (len > sink.capacity - sink.got) {
    r.too_long = true;
    return 0;
  }
  std::memcpy(sink.dst + sink.got, p, len);
  sink.got += len;
  return len;
}

struct ContentRange {
  uint64_t first = 0, last = 0, total = 0;
};

// "bytes FIRST-LAST/TOTAL", digits only, FIRST <= LAST < TOTAL.
std::optional<ContentRange> ParseContentRange(std::string_view v) {
  if (!StartsWithIgnoreCase(v, "bytes ")) return std::nullopt;
  v.remove_prefix(6);
  const size_t dash = v.find('-'), slash = v.find('/');
  if (dash == std::string_view::npos || slash == std::string_view::npos || dash > slash) return std::nullopt;
  auto number = [](std::string_view s, uint64_t* out) { return ParseU64(s, out); };
  ContentRange cr;
  if (!number(v.substr(0, dash), &cr.first) || !number(v.substr(dash + 1, slash - dash - 1), &cr.last) ||
      !number(v.substr(slash + 1), &cr.total)) {
    return std::nullopt;
  }
  if (cr.first > cr.last || cr.last >= cr.total) return std::nullopt;
  return cr;
}

bool IsRedirect(int status) { return status == 301 || status == 302 || status == 303 || status == 307 || status == 308; }

std::string OriginHost(std::string_view origin) {
  std::string_view rest = origin.substr(std::min(origin.size(), origin.find("://") + 3));
  return std::string(rest.substr(0, rest.rfind(':')));
}

}  // namespace

struct HttpSource::Session {
  CURL* easy = nullptr;
  curl_slist* auth = nullptr;  // "Authorization: Bearer ...": the user's origin only
  std::string label;
  std::string origin;  // the user's URL's scheme://host:port
  std::string url;     // where requests go: the end of the redirect chain
  RemoteOptions options;
  std::chrono::steady_clock::time_point deadline;  // options.total_timeout_s after Open began
  char errbuf[CURL_ERROR_SIZE] = {};

  ~Session() {
    if (easy != nullptr) Curl().easy_cleanup(easy);
    Curl().slist_free_all(auth);
  }

  std::string Name() const { return EscapeForDisplay(label, 4096); }

  absl::Status BudgetError(const TransferStats& stats) const {
    return BudgetSpentError(absl::StrCat(
        Name(), ": the remote transfer budget of ", options.max_bytes,
        " bytes (policy limit max_remote_bytes) would be passed after ", stats.bytes,
        " bytes in ", stats.requests, " requests"));
  }

  // Milliseconds left before the deadline (0 when it has passed).
  int64_t MsLeft() const {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    return std::max<int64_t>(0, left.count());
  }
  absl::Status DeadlineError(const TransferStats& stats) const {
    return BudgetSpentError(absl::StrCat(Name(), ": the remote deadline of ", options.total_timeout_s,
                                         " s (--timeout, policy limit max_remote_seconds) passed after ", stats.bytes,
                                         " bytes in ", stats.requests, " requests"));
  }

  // The options every request shares, on `easy` (a range request's or the
  // stream's handle). `range` is "FIRST-LAST".
  absl::Status Configure(CURL* handle, const std::string& target, const std::string& range, Response* response,
                         curl_write_callback on_body, void* body_user) {
    Curl().easy_reset(handle);
    absl::StatusOr<std::string> target_origin = UrlOrigin(target);
    if (!target_origin.ok()) return target_origin.status();
    bool ok = Curl().easy_setopt(handle, CURLOPT_URL, target.c_str()) == CURLE_OK;
    ok &= Curl().easy_setopt(handle, CURLOPT_FOLLOWLOCATION, 0L) == CURLE_OK;  // followed by hand, checked
    ok &= Curl().easy_setopt(handle, CURLOPT_PROTOCOLS_STR, "http,https") == CURLE_OK;
    ok &= Curl().easy_setopt(handle, CURLOPT_NOSIGNAL, 1L) == CURLE_OK;  // scan's threads
    ok &= Curl().easy_setopt(handle, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(options.connect_timeout_ms)) == CURLE_OK;
    ok &= Curl().easy_setopt(handle, CURLOPT_LOW_SPEED_LIMIT, static_cast<long>(options.idle_min_bytes_per_s)) == CURLE_OK;
    ok &= Curl().easy_setopt(handle, CURLOPT_LOW_SPEED_TIME, static_cast<long>(options.idle_timeout_s)) == CURLE_OK;
    // What is left of the file's deadline bounds this request, connect
    // included; a request is not started once it has passed.
    const int64_t left = MsLeft();
    if (left == 0) return absl::DeadlineExceededError("deadline");
    ok &= Curl().easy_setopt(handle, CURLOPT_TIMEOUT_MS, static_cast<long>(left)) == CURLE_OK;
    // No Accept-Encoding is sent and nothing is decoded: the bytes judged
    // are the bytes served (an encoded answer is refused, OnRangeBody).
    ok &= Curl().easy_setopt(handle, CURLOPT_HTTP_CONTENT_DECODING, 0L) == CURLE_OK;
    ok &= Curl().easy_setopt(handle, CURLOPT_ERRORBUFFER, errbuf) == CURLE_OK;
    ok &= Curl().easy_setopt(handle, CURLOPT_USERAGENT, "ggufguard/0.1.0") == CURLE_OK;
    ok &= Curl().easy_setopt(handle, CURLOPT_HEADERFUNCTION, &OnHeader) == CURLE_OK;
    ok &= Curl().easy_setopt(handle, CURLOPT_HEADERDATA, response) == CURLE_OK;
    ok &= Curl().easy_setopt(handle, CURLOPT_WRITEFUNCTION, on_body) == CURLE_OK;
    ok &= Curl().easy_setopt(handle, CURLOPT_WRITEDATA, body_user) == CURLE_OK;
    ok &= Curl().easy_setopt(handle, CURLOPT_RANGE, range.c_str()) == CURLE_OK;
    // A proxy from the environment is for the outside world, not loopback.
    if (IsLoopbackHost(OriginHost(*target_origin))) ok &= Curl().easy_setopt(handle, CURLOPT_PROXY, "") == CURLE_OK;
    // The token goes to the origin the user named, never to a host a
    // redirect chose (a CDN, or an attacker's).
    if (auth != nullptr && *target_origin == origin) ok &= Curl().easy_setopt(handle, CURLOPT_HTTPHEADER, auth) == CURLE_OK;
    if (!ok) return absl::InternalError("libcurl refused an option");
    errbuf[0] = '\0';
    return absl::OkStatus();
  }

  // What went wrong in a transfer that libcurl or a callback ended.
  absl::Status TransferError(CURLcode rc, const Response& r, uint64_t expected, uint64_t got,
                             const TransferStats& stats) const {
    if (r.over_budget) return BudgetError(stats);
    if (r.headers_too_big) {
      return absl::DataLossError(absl::StrCat(Name(), ": the server sent more than ", kMaxHeaderBytes,
                                              " bytes of headers"));
    }
    if (r.too_long) {
      return absl::DataLossError(absl::StrCat(Name(), ": the server sent more than the ", expected,
                                              " bytes asked for: stopped"));
    }
    // libcurl's clock and ours round apart by a few ms: a timeout that
    // close to the deadline is the deadline (the rate and connect limits
    // are whole seconds of their own).
    if (rc == CURLE_OPERATION_TIMEDOUT && MsLeft() < 100) return DeadlineError(stats);
    if (rc == CURLE_OPERATION_TIMEDOUT) {
      return absl::DeadlineExceededError(absl::StrCat(
          Name(), ": timed out (connect timeout ", options.connect_timeout_ms, " ms, or less than ",
          options.idle_min_bytes_per_s, " bytes/s for ", options.idle_timeout_s, " s: --min-rate, --idle-timeout)"));
    }
    if (rc == CURLE_PARTIAL_FILE) {
      return absl::DataLossError(absl::StrCat(Name(), ": the body ended after ", got, " of the ", expected,
                                              " bytes promised"));
    }
    return absl::UnavailableError(absl::StrCat(Name(), ": cannot fetch: ", Curl().easy_strerror(rc),
                                               errbuf[0] ? absl::StrCat(" (", EscapeForDisplay(errbuf, 300), ")") : ""));
  }

  // One range request of bytes [first, last] on the session's handle.
  absl::Status Get(const std::string& target, uint64_t first, uint64_t last, RangeSink* sink, TransferStats* stats) {
    if (SatAdd(stats->bytes, last - first + 1) > options.max_bytes) return BudgetError(*stats);
    sink->response.stats = stats;
    sink->response.max_bytes = options.max_bytes;
    absl::Status s = Configure(easy, target, absl::StrCat(first, "-", last), &sink->response, &OnRangeBody, sink);
    if (absl::IsDeadlineExceeded(s)) return DeadlineError(*stats);
    if (!s.ok()) return s;
    ++stats->requests;
    const CURLcode rc = Curl().easy_perform(easy);
    const Response& r = sink->response;
    if (rc == CURLE_OK || (rc == CURLE_WRITE_ERROR && (r.refused_status || r.refused_encoding) && !r.over_budget)) {
      return absl::OkStatus();  // CheckRange says what the answer was
    }
    return TransferError(rc, r, last - first + 1, sink->got, *stats);
  }

  // The answer to a range request of [first, last_asked] must be exactly
  // that range (cut at the end of the file) of a file of `known_size`
  // bytes, when known; the file's size goes to *total.
  absl::Status CheckRange(const RangeSink& sink, uint64_t first, uint64_t last_asked,
                          std::optional<uint64_t> known_size, uint64_t* total) const {
    const Response& r = sink.response;
    const std::string asked = absl::StrCat("bytes ", first, "-", last_asked);
    if (r.status == 200) {
      return absl::DataLossError(absl::StrCat(Name(), ": the server answered 200 (the whole file) to a request for ",
                                              asked, ", not 206: the range is ignored, stopped before the body"));
    }
    if (r.status == 416) {
      return absl::OutOfRangeError(absl::StrCat(Name(), ": 416 Range Not Satisfiable for ", asked,
                                                known_size ? absl::StrCat(" of a file of ", *known_size, " bytes") : ""));
    }
    if (IsRedirect(r.status)) {
      return absl::DataLossError(absl::StrCat(Name(), ": redirected (", r.status, ") on a later request for ", asked));
    }
    if (r.status == 404 || r.status == 410) {
      // Absent, not unreachable: a split set's missing shard (GG9100).
      return absl::NotFoundError(absl::StrCat(Name(), ": HTTP ", r.status, " for ", asked));
    }
    if (r.status != 206) {
      return absl::UnavailableError(absl::StrCat(Name(), ": HTTP ", r.status, " for ", asked));
    }
    if (r.content_encoding) {
      return absl::DataLossError(absl::StrCat(Name(), ": the answer to ", asked, " is sent with Content-Encoding '",
                                              EscapeForDisplay(*r.content_encoding, 60),
                                              "', which was not asked for: its bytes are not the file's, refused"));
    }
    const std::optional<ContentRange> cr = r.content_range ? ParseContentRange(*r.content_range) : std::nullopt;
    const std::string said =
        r.content_range ? absl::StrCat("'", EscapeForDisplay(*r.content_range, 100), "'") : std::string("nothing");
    if (!cr) {
      return absl::DataLossError(absl::StrCat(Name(), ": 206 without a valid Content-Range (", said, ") for ", asked));
    }
    if (known_size && cr->total != *known_size) {
      return absl::DataLossError(absl::StrCat(Name(), ": Content-Range changed: the file had ", *known_size,
                                              " bytes, now ", said, " for ", asked));
    }
    if (cr->first != first || cr->last != std::min(last_asked, cr->total - 1)) {
      return absl::DataLossError(absl::StrCat(Name(), ": Content-Range lies: asked ", asked, ", answered ", said));
    }
    const uint64_t promised = cr->last - cr->first + 1;
    if (sink.got != promised) {
      return absl::DataLossError(absl::StrCat(Name(), ": the body ended after ", sink.got, " of the ", promised,
                                              " bytes Content-Range promised"));
    }
    *total = cr->total;
    return absl::OkStatus();
  }
};

absl::StatusOr<std::unique_ptr<HttpSource>> HttpSource::Open(const std::string& url, const std::string& label,
                                                             const RemoteOptions& options, TransferStats* spent) {
  if (absl::Status loaded = LoadCurl(); !loaded.ok()) return loaded;
  auto session = std::make_unique<Session>();
  session->label = label;
  session->options = options;
  session->deadline = std::chrono::steady_clock::now() + std::chrono::seconds(options.total_timeout_s);
  session->easy = Curl().easy_init();
  if (session->easy == nullptr) return absl::ResourceExhaustedError("libcurl: cannot create a handle");
  if (absl::Status s = CheckFetchableUrl(url); !s.ok()) return s;
  absl::StatusOr<std::string> origin = UrlOrigin(url);
  if (!origin.ok()) return origin.status();
  session->origin = *origin;
  if (!options.token.empty()) {
    for (char c : options.token) {
      if (static_cast<unsigned char>(c) < 0x21 || static_cast<unsigned char>(c) > 0x7e) {
        return absl::InvalidArgumentError("the token holds a byte that is not printable ASCII (not shown)");
      }
    }
    session->auth = Curl().slist_append(nullptr, absl::StrCat("Authorization: Bearer ", options.token).c_str());
    if (session->auth == nullptr) return absl::ResourceExhaustedError("out of memory");
  }
  std::unique_ptr<HttpSource> source(new HttpSource(std::move(session)));
  Session& s = *source->session_;
  struct ReportSpent {
    HttpSource* source;
    TransferStats* spent;
    ~ReportSpent() {
      if (spent != nullptr) *spent = source->stats_;
    }
  } report_spent{source.get(), spent};

  // A budget below the first read shortens it, so that a small file can
  // still be judged under a small budget.
  const uint64_t want = std::max<uint64_t>(std::min(options.first_read, options.max_bytes / 2), 1);
  source->first_block_.resize(static_cast<size_t>(want));
  std::string current = url;
  std::set<std::string> seen{current};
  for (uint32_t hops = 0;; ++hops) {
    RangeSink sink;
    sink.dst = source->first_block_.data();
    sink.capacity = source->first_block_.size();
    absl::Status got = s.Get(current, 0, want - 1, &sink, &source->stats_);
    if (!got.ok()) return got;
    const Response& r = sink.response;
    // The hub names the file's size and SHA-256 on its own answer (the
    // redirect to its CDN), not on the CDN's.
    if (!source->linked_size_ && r.linked_size) {
      uint64_t n;
      if (!ParseU64(*r.linked_size, &n)) {
        return absl::DataLossError(absl::StrCat(s.Name(), ": X-Linked-Size is not a number"));
      }
      source->linked_size_ = n;
    }
    if (source->linked_etag_.empty() && r.linked_etag) {
      std::string_view etag = *r.linked_etag;
      if (etag.substr(0, 2) == "W/") etag.remove_prefix(2);
      if (etag.size() >= 2 && etag.front() == '"' && etag.back() == '"') etag = etag.substr(1, etag.size() - 2);
      source->linked_etag_ = std::string(etag.substr(0, 200));
    }
    if (IsRedirect(r.status)) {
      char* location = nullptr;
      if (Curl().easy_getinfo(s.easy, CURLINFO_REDIRECT_URL, &location) != CURLE_OK || location == nullptr) {
        return absl::DataLossError(absl::StrCat(s.Name(), ": redirect (", r.status, ") without a usable Location"));
      }
      const std::string next = location;
      if (hops + 1 > options.max_redirects) {
        return absl::DataLossError(absl::StrCat(s.Name(), ": more than ", options.max_redirects, " redirects"));
      }
      if (!seen.insert(next).second) {
        return absl::DataLossError(absl::StrCat(s.Name(), ": redirect loop (back to ", UrlHostForDisplay(next),
                                                " after ", hops + 1, " redirects)"));
      }
      if (absl::Status allowed = CheckFetchableUrl(next); !allowed.ok()) {
        return absl::PermissionDeniedError(absl::StrCat(s.Name(), ": redirect refused, not followed: ",
                                                        allowed.message()));
      }
      current = next;
      continue;
    }
    if (r.status == 416 && r.content_range == "bytes */0") {
      source->size_ = 0;  // an empty file: nothing to range over
      source->first_block_.clear();
      break;
    }
    uint64_t total = 0;
    if (absl::Status checked = s.CheckRange(sink, 0, want - 1, std::nullopt, &total); !checked.ok()) return checked;
    source->size_ = total;
    source->first_block_.resize(sink.got);
    break;
  }
  s.url = current;
  return source;
}

HttpSource::HttpSource(std::unique_ptr<Session> session) : session_(std::move(session)) {}
HttpSource::~HttpSource() = default;

absl::Status HttpSource::ReadAt(uint64_t offset, absl::Span<uint8_t> out) {
  if (offset > size_ || out.size() > size_ - offset) {
    return absl::OutOfRangeError(absl::StrCat("read of ", out.size(), " bytes at ", offset, " is past the end"));
  }
  if (out.empty()) return absl::OkStatus();
  if (offset + out.size() <= first_block_.size()) {
    std::memcpy(out.data(), first_block_.data() + offset, out.size());
    return absl::OkStatus();
  }
  RangeSink sink;
  sink.dst = out.data();
  sink.capacity = out.size();
  const uint64_t last = offset + out.size() - 1;
  absl::Status s = session_->Get(session_->url, offset, last, &sink, &stats_);
  if (!s.ok()) return s;
  uint64_t total = 0;
  return session_->CheckRange(sink, offset, last, size_, &total);
}

// The whole file read forward: first the block HttpSource::Open already
// holds (no byte is fetched twice), then the rest in one GET, which libcurl's
// multi interface pushes into a 1 MiB buffer and pauses while the buffer is
// full, so memory stays bounded and the reader pulls at its own pace.
class HttpStream final : public ByteStream {
 public:
  explicit HttpStream(HttpSource& source) : source_(source), session_(*source.session_) {}
  ~HttpStream() override {
    if (multi_ != nullptr && easy_ != nullptr) Curl().multi_remove_handle(multi_, easy_);
    if (easy_ != nullptr) Curl().easy_cleanup(easy_);
    if (multi_ != nullptr) Curl().multi_cleanup(multi_);
  }

  absl::Status Start() {
    const uint64_t size = source_.size();
    first_ = source_.first_block_.size();  // at most size: Open cut it to the file
    if (first_ == size) {
      done_ = true;  // the first block is the whole file
      return absl::OkStatus();
    }
    if (SatAdd(source_.stats_.bytes, size - first_) > session_.options.max_bytes) {
      return session_.BudgetError(source_.stats_);
    }
    easy_ = Curl().easy_init();
    multi_ = Curl().multi_init();
    if (easy_ == nullptr || multi_ == nullptr) return absl::ResourceExhaustedError("libcurl: cannot create a handle");
    response_.stats = &source_.stats_;
    response_.max_bytes = session_.options.max_bytes;
    absl::Status s =
        session_.Configure(easy_, session_.url, absl::StrCat(first_, "-", size - 1), &response_, &OnBody, this);
    if (absl::IsDeadlineExceeded(s)) return session_.DeadlineError(source_.stats_);
    if (!s.ok()) return s;
    Curl().easy_setopt(easy_, CURLOPT_BUFFERSIZE, 256L << 10);
    buffer_.reset(new uint8_t[kBuffer]);
    if (Curl().multi_add_handle(multi_, easy_) != CURLM_OK) return absl::InternalError("libcurl: cannot add a handle");
    ++source_.stats_.requests;
    return absl::OkStatus();
  }

  absl::StatusOr<size_t> Read(absl::Span<uint8_t> out) override {
    if (served_first_ < first_) {
      const size_t n = static_cast<size_t>(std::min<uint64_t>(out.size(), first_ - served_first_));
      std::memcpy(out.data(), source_.first_block_.data() + served_first_, n);
      served_first_ += n;
      return n;
    }
    while (head_ == tail_ && !done_) {
      if (paused_) {
        paused_ = false;
        Curl().easy_pause(easy_, CURLPAUSE_CONT);  // may deliver the held chunk at once
        continue;
      }
      int running = 0;
      if (Curl().multi_perform(multi_, &running) != CURLM_OK) return absl::InternalError("libcurl: multi perform failed");
      int left = 0;
      while (CURLMsg* m = Curl().multi_info_read(multi_, &left)) {
        if (m->msg == CURLMSG_DONE) {
          done_ = true;
          result_ = m->data.result;
        }
      }
      if (head_ == tail_ && !done_ && !paused_) Curl().multi_poll(multi_, nullptr, 0, 1000, nullptr);
    }
    if (head_ < tail_) {
      const size_t n = std::min(out.size(), tail_ - head_);
      std::memcpy(out.data(), buffer_.get() + head_, n);
      head_ += n;
      return n;
    }
    if (!error_.ok()) return error_;
    if (first_ == source_.size()) return size_t{0};
    if (!checked_) {
      // No body came: the status (a 404 with an empty body) says why.
      RangeSink view;
      view.response = response_;
      uint64_t total = 0;
      absl::Status s = session_.CheckRange(view, first_, source_.size() - 1, source_.size(), &total);
      if (!s.ok()) return s;
    }
    if (result_ != CURLE_OK) {
      return session_.TransferError(result_, response_, source_.size(), first_ + received_, source_.stats_);
    }
    if (first_ + received_ != source_.size()) {
      return absl::DataLossError(absl::StrCat(session_.Name(), ": the body ended after ", first_ + received_,
                                              " of the ", source_.size(), " bytes promised"));
    }
    return size_t{0};
  }

 private:
  static constexpr size_t kBuffer = size_t{1} << 20;  // > CURLOPT_BUFFERSIZE: a held chunk fits an empty buffer

  static size_t OnBody(char* p, size_t size, size_t n, void* user) {
    HttpStream& st = *static_cast<HttpStream*>(user);
    const size_t len = size * n;
    if (!st.checked_) {
      // The first body bytes: the answer must be the rest of the file as a
      // range.
      RangeSink view;
      view.response = st.response_;
      view.got = static_cast<size_t>(st.source_.size() - st.first_);  // the length is checked as it arrives
      uint64_t total = 0;
      const uint64_t last = st.source_.size() - 1;
      absl::Status s = st.session_.CheckRange(view, st.first_, last, st.source_.size(), &total);
      if (!s.ok()) {
        st.error_ = s;
        return 0;
      }
      st.checked_ = true;
    }
    if (head_empty(st) && st.head_ != 0) st.head_ = st.tail_ = 0;
    if (len > kBuffer - st.tail_) {
      if (st.head_ == st.tail_) {
        st.error_ = absl::InternalError("libcurl delivered a chunk larger than the stream buffer");
        return 0;
      }
      st.paused_ = true;
      return CURL_WRITEFUNC_PAUSE;
    }
    if (!st.response_.Count(len)) {
      st.error_ = st.session_.BudgetError(st.source_.stats_);
      return 0;
    }
    if (len > st.source_.size() - st.first_ - st.received_) {
      st.response_.too_long = true;
      st.error_ = st.session_.TransferError(CURLE_WRITE_ERROR, st.response_, st.source_.size() - st.first_,
                                            st.received_, st.source_.stats_);
      return 0;
    }
    std::memcpy(st.buffer_.get() + st.tail_, p, len);
    st.tail_ += len;
    st.received_ += len;
    return len;
  }
  static bool head_empty(const HttpStream& st) { return st.head_ == st.tail_; }

  HttpSource& source_;
  HttpSource::Session& session_;
  CURL* easy_ = nullptr;
  CURLM* multi_ = nullptr;
  Response response_;
  std::unique_ptr<uint8_t[]> buffer_;
  size_t head_ = 0, tail_ = 0;
  uint64_t first_ = 0;         // bytes served from the first block, then asked from here on
  uint64_t served_first_ = 0;  // of them, how many the reader has taken
  uint64_t received_ = 0;      // body bytes of the GET
  bool paused_ = false;
  bool done_ = false;
  bool checked_ = false;
  CURLcode result_ = CURLE_OK;
  absl::Status error_;
};

absl::StatusOr<std::unique_ptr<ByteStream>> HttpSource::OpenStream() {
  auto stream = std::make_unique<HttpStream>(*this);
  if (absl::Status s = stream->Start(); !s.ok()) return s;
  return std::unique_ptr<ByteStream>(std::move(stream));
}

}  // namespace ggufguard
