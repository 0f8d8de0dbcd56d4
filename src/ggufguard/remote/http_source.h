// A remote file read with HTTP range requests (libcurl), as a ByteSource the
// validator reads like a local file, and the same file as one forward
// stream for --hash and --deep.
//
// The server is untrusted input like the file: every answer must be exactly
// what was asked (206, the asked range, the size first seen, no
// Content-Encoding: no compression is asked for, and a compressed body is
// not the file's bytes), redirects are
// followed by hand (only https or loopback http, at most max_redirects, no
// loop), the token goes only to the origin the user named, and every byte
// received counts against a budget, and every request against one deadline
// for the whole file. docs/remote.md describes the behaviour.
#ifndef GGUFGUARD_REMOTE_HTTP_SOURCE_H_
#define GGUFGUARD_REMOTE_HTTP_SOURCE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "ggufguard/io/source.h"
#include "ggufguard/remote/transfer_stats.h"

namespace ggufguard {

struct RemoteOptions {
  // Sent as "Authorization: Bearer TOKEN" to the first URL's origin only;
  // never printed, logged or put in a message.
  std::string token;
  uint32_t connect_timeout_ms = 10000;  // TCP and TLS connect
  // The minimum rate: a transfer slower than idle_min_bytes_per_s over
  // idle_timeout_s is abandoned (a slow drip), an I/O error.
  uint32_t idle_timeout_s = 30;
  uint32_t idle_min_bytes_per_s = 8192;
  // The total deadline for the file, every request of it together, from
  // Open on: past it reading fails with BudgetSpentError ("could not
  // verify": inconclusive). A server dripping just above the minimum rate
  // cannot hold a file longer than this.
  uint32_t total_timeout_s = 1800;
  uint32_t max_redirects = 10;
  // The most bytes (headers and bodies) one file may cost; a read that
  // would pass it fails with ResourceExhausted ("could not verify").
  uint64_t max_bytes = UINT64_MAX;
  // The first request's range: the header of most models in one request.
  uint64_t first_read = uint64_t{2} << 20;
};

class HttpSource final : public ByteSource {
 public:
  // Follows redirects from `url` with a first range request; `label` (the
  // argument as the user gave it) names the file in messages.
  // What the requests cost goes to *spent, when given, on success and on
  // error alike.
  static absl::StatusOr<std::unique_ptr<HttpSource>> Open(const std::string& url, const std::string& label,
                                                          const RemoteOptions& options, TransferStats* spent = nullptr);
  ~HttpSource() override;
  HttpSource(const HttpSource&) = delete;
  HttpSource& operator=(const HttpSource&) = delete;

  uint64_t size() const override { return size_; }
  absl::Status ReadAt(uint64_t offset, absl::Span<uint8_t> out) override;

  // The whole file as one GET of bytes 0 to size-1 from where the redirects
  // led; the source must outlive the stream, whose bytes count in stats().
  absl::StatusOr<std::unique_ptr<ByteStream>> OpenStream();

  const TransferStats& stats() const { return stats_; }
  // The hub's X-Linked-Size and X-Linked-Etag (quotes removed) from the
  // responses of the redirect chain, when it sent them.
  std::optional<uint64_t> linked_size() const { return linked_size_; }
  const std::string& linked_etag() const { return linked_etag_; }

  struct Session;  // the curl handle and what each response said (http_source.cc)

 private:
  explicit HttpSource(std::unique_ptr<Session> session);
  std::unique_ptr<Session> session_;
  uint64_t size_ = 0;
  TransferStats stats_;
  std::optional<uint64_t> linked_size_;
  std::string linked_etag_;
  // The first response's body, which usually holds the whole header.
  std::vector<uint8_t> first_block_;
  friend class HttpStream;
};

}  // namespace ggufguard

#endif  // GGUFGUARD_REMOTE_HTTP_SOURCE_H_
