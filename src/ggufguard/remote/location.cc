#include "ggufguard/remote/location.h"

#include "ggufguard/remote/curl_api.h"

#include <cstdlib>
#include <memory>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "ggufguard/base/sv.h"
#include "ggufguard/base/text.h"
#include "ggufguard/remote/text_util.h"

namespace ggufguard {
namespace {

using namespace remote_text;

constexpr std::string_view kDefaultHfEndpoint = "https://huggingface.co";
constexpr size_t kMaxUrlBytes = 8192;

struct UrlDeleter {
  void operator()(CURLU* u) const { Curl().url_cleanup(u); }
};
using UrlHandle = std::unique_ptr<CURLU, UrlDeleter>;

struct CurlString {
  char* p = nullptr;
  ~CurlString() { Curl().free(p); }
};

// The URL parsed by curl itself, so that what is checked is what curl will
// connect to (no second parser that could read a host differently).
absl::StatusOr<UrlHandle> ParseUrl(std::string_view url) {
  if (url.size() > kMaxUrlBytes) return absl::InvalidArgumentError("URL longer than 8192 bytes");
  for (char c : url) {
    if (static_cast<unsigned char>(c) <= 0x20 || static_cast<unsigned char>(c) >= 0x7f) {
      return absl::InvalidArgumentError("URL holds a space, a control byte or a non-ASCII byte");
    }
  }
  if (absl::Status loaded = LoadCurl(); !loaded.ok()) return loaded;
  UrlHandle u(Curl().url());
  if (!u) return absl::ResourceExhaustedError("out of memory");
  const std::string text(url);
  if (Curl().url_set(u.get(), CURLUPART_URL, text.c_str(), 0) != CURLUE_OK) {
    return absl::InvalidArgumentError(absl::StrCat("not a URL: ", EscapeForDisplay(url, 200)));
  }
  return u;
}

absl::StatusOr<std::string> Part(CURLU* u, CURLUPart part, unsigned flags = 0) {
  CurlString s;
  if (Curl().url_get(u, part, &s.p, flags) != CURLUE_OK || s.p == nullptr) {
    return absl::InvalidArgumentError("URL part missing");
  }
  return std::string(s.p);
}

bool IsUnreserved(char c) { return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_' || c == '~'; }

// One path component, percent-encoded where it is not unreserved.
absl::StatusOr<std::string> EncodeComponent(std::string_view name, std::string_view what) {
  if (name.empty() || name == "." || name == "..") {
    return absl::InvalidArgumentError(absl::StrCat(Sv(what), ": empty, '.' or '..' path component"));
  }
  std::string out;
  for (char c : name) {
    const unsigned char b = static_cast<unsigned char>(c);
    if (b < 0x20 || b == 0x7f || c == '\\' || c == '/') {
      return absl::InvalidArgumentError(absl::StrCat(Sv(what), ": a control byte, '\\' or '/' in a path component"));
    }
    if (IsUnreserved(c)) {
      out.push_back(c);
    } else {
      absl::StrAppend(&out, "%", absl::AsciiStrToUpper(absl::StrCat(absl::Hex(b, absl::kZeroPad2))));
    }
  }
  return out;
}

// ORG, REPO and REVISION as the Hub spells them: letters, digits, '-', '_',
// '.', not starting or ending with '-' or '.', no "..", at most 96 bytes.
bool IsHubName(std::string_view s) {
  if (s.empty() || s.size() > 96) return false;
  for (char c : s) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') return false;
  }
  const auto edge = [](char c) { return c == '-' || c == '.'; };
  return !edge(s.front()) && !edge(s.back()) && s.find("..") == std::string_view::npos;
}

absl::StatusOr<std::string> ResolveHf(std::string_view arg, std::string_view hf_endpoint) {
  std::string_view rest = arg.substr(5);  // after "hf://"
  std::vector<std::string_view> parts = Split(rest, '/', 3);
  if (parts.size() < 3 || parts[2].empty()) {
    return absl::InvalidArgumentError("hf:// wants ORG/REPO[@REVISION]/PATH");
  }
  std::string_view org = parts[0], repo = parts[1], revision = "main";
  if (const size_t at = repo.find('@'); at != std::string_view::npos) {
    revision = repo.substr(at + 1);
    repo = repo.substr(0, at);
  }
  if (!IsHubName(org)) return absl::InvalidArgumentError("hf://: ORG must be letters, digits, '-', '_', '.'");
  if (!IsHubName(repo)) return absl::InvalidArgumentError("hf://: REPO must be letters, digits, '-', '_', '.'");
  if (!IsHubName(revision)) {
    return absl::InvalidArgumentError("hf://: REVISION must be letters, digits, '-', '_', '.' (a branch, tag or commit)");
  }
  std::string path;
  for (std::string_view component : Split(parts[2], '/')) {
    absl::StatusOr<std::string> encoded = EncodeComponent(component, "hf:// PATH");
    if (!encoded.ok()) return encoded.status();
    absl::StrAppend(&path, path.empty() ? "" : "/", *encoded);
  }
  std::string endpoint(hf_endpoint.empty() ? kDefaultHfEndpoint : hf_endpoint);
  while (!endpoint.empty() && endpoint.back() == '/') endpoint.pop_back();
  if (absl::Status s = CheckFetchableUrl(endpoint); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("HF_ENDPOINT: ", s.message()));
  }
  return absl::StrCat(endpoint, "/", Sv(org), "/", Sv(repo), "/resolve/", Sv(revision), "/", path);
}

}  // namespace

bool IsRemoteArgument(std::string_view arg) {
  return StartsWithIgnoreCase(arg, "https://") || StartsWithIgnoreCase(arg, "http://") ||
         StartsWithIgnoreCase(arg, "hf://");
}

bool IsLoopbackHost(std::string_view host) {
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  if (EqualsIgnoreCase(host, "localhost") || host == "::1") return true;
  // 127.0.0.0/8 in dotted decimal: four numbers 0-255, the first 127.
  std::vector<std::string_view> octets = Split(host, '.');
  if (octets.size() != 4 || octets[0] != "127") return false;
  for (std::string_view o : octets) {
    if (o.empty() || o.size() > 3) return false;
    for (char c : o) {
      if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return false;
    }
    uint64_t value = 0;
    if (!ParseU64(o, &value) || value > 255) return false;
  }
  return true;
}

absl::Status CheckFetchableUrl(std::string_view url) {
  absl::StatusOr<UrlHandle> u = ParseUrl(url);
  if (!u.ok()) return u.status();
  absl::StatusOr<std::string> scheme = Part(u->get(), CURLUPART_SCHEME);
  absl::StatusOr<std::string> host = Part(u->get(), CURLUPART_HOST);
  if (!scheme.ok() || !host.ok() || host->empty()) return absl::InvalidArgumentError("URL without a scheme or host");
  if (Part(u->get(), CURLUPART_USER).ok()) {
    return absl::InvalidArgumentError("URL with a user name or password (give a token with HF_TOKEN or --token-file)");
  }
  const std::string lower = absl::AsciiStrToLower(*scheme);
  if (lower == "https") return absl::OkStatus();
  if (lower == "http") {
    if (IsLoopbackHost(*host)) return absl::OkStatus();
    return absl::PermissionDeniedError(absl::StrCat("http:// is fetched only from a loopback host, not ",
                                                    EscapeForDisplay(*host, 200), " (use https://)"));
  }
  return absl::PermissionDeniedError(
      absl::StrCat("scheme ", EscapeForDisplay(lower, 32), ": only https, or http to a loopback host"));
}

absl::StatusOr<Location> ResolveLocation(std::string_view arg, std::string_view hf_endpoint) {
  if (!IsRemoteArgument(arg)) return Location{false, std::string(arg)};
  std::string url;
  if (StartsWithIgnoreCase(arg, "hf://")) {
    absl::StatusOr<std::string> resolved = ResolveHf(arg, hf_endpoint);
    if (!resolved.ok()) return resolved.status();
    url = *std::move(resolved);
  } else {
    url = std::string(arg);
  }
  if (absl::Status s = CheckFetchableUrl(url); !s.ok()) return s;
  return Location{true, std::move(url)};
}

absl::StatusOr<Location> ResolveLocation(std::string_view arg) {
  const char* endpoint = std::getenv("HF_ENDPOINT");
  return ResolveLocation(arg, endpoint != nullptr ? endpoint : "");
}

absl::StatusOr<std::string> SiblingUrl(std::string_view url, std::string_view name) {
  absl::StatusOr<std::string> encoded = EncodeComponent(name, "sibling file name");
  if (!encoded.ok()) return encoded.status();
  absl::StatusOr<UrlHandle> u = ParseUrl(url);
  if (!u.ok()) return u.status();
  absl::StatusOr<std::string> path = Part(u->get(), CURLUPART_PATH);
  if (!path.ok()) return path.status();
  const size_t slash = path->rfind('/');
  const std::string sibling = absl::StrCat(path->substr(0, slash == std::string::npos ? 0 : slash + 1), *encoded);
  if (Curl().url_set(u->get(), CURLUPART_PATH, sibling.c_str(), 0) != CURLUE_OK ||
      Curl().url_set(u->get(), CURLUPART_QUERY, nullptr, 0) != CURLUE_OK ||
      Curl().url_set(u->get(), CURLUPART_FRAGMENT, nullptr, 0) != CURLUE_OK) {
    return absl::InvalidArgumentError("cannot build the sibling URL");
  }
  return Part(u->get(), CURLUPART_URL);
}

absl::StatusOr<std::string> UrlOrigin(std::string_view url) {
  absl::StatusOr<UrlHandle> u = ParseUrl(url);
  if (!u.ok()) return u.status();
  absl::StatusOr<std::string> scheme = Part(u->get(), CURLUPART_SCHEME);
  absl::StatusOr<std::string> host = Part(u->get(), CURLUPART_HOST);
  absl::StatusOr<std::string> port = Part(u->get(), CURLUPART_PORT, CURLU_DEFAULT_PORT);
  if (!scheme.ok() || !host.ok() || !port.ok()) return absl::InvalidArgumentError("URL without a scheme or host");
  return absl::AsciiStrToLower(absl::StrCat(*scheme, "://", *host, ":", *port));
}

std::string UrlHostForDisplay(std::string_view url) {
  absl::StatusOr<UrlHandle> u = ParseUrl(url);
  if (!u.ok()) return "?";
  absl::StatusOr<std::string> host = Part(u->get(), CURLUPART_HOST);
  absl::StatusOr<std::string> port = Part(u->get(), CURLUPART_PORT);
  if (!host.ok()) return "?";
  return EscapeForDisplay(port.ok() ? absl::StrCat(*host, ":", *port) : *host, 300);
}

}  // namespace ggufguard
