#include "ggufguard/remote/curl_api.h"

#include <dlfcn.h>

#include <mutex>
#include <string>

#include "absl/strings/str_cat.h"

namespace ggufguard {
namespace {

CurlApi api;
absl::Status load_status = absl::InternalError("libcurl not loaded");

template <typename F>
bool Bind(void* lib, const char* name, F* out, std::string* missing) {
  *out = reinterpret_cast<F>(::dlsym(lib, name));
  if (*out == nullptr) *missing = name;
  return *out != nullptr;
}

absl::Status Load() {
  // The soname of Debian's libcurl4 (OpenSSL flavour), which
  // libcurl4-openssl-dev's headers describe.
  void* lib = ::dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    return absl::UnavailableError(absl::StrCat("remote files need libcurl (Debian package libcurl4): ", ::dlerror()));
  }
  std::string missing;
  const bool ok = Bind(lib, "curl_global_init", &api.global_init, &missing) &&
                  Bind(lib, "curl_easy_init", &api.easy_init, &missing) &&
                  Bind(lib, "curl_easy_cleanup", &api.easy_cleanup, &missing) &&
                  Bind(lib, "curl_easy_reset", &api.easy_reset, &missing) &&
                  Bind(lib, "curl_easy_setopt", &api.easy_setopt, &missing) &&
                  Bind(lib, "curl_easy_perform", &api.easy_perform, &missing) &&
                  Bind(lib, "curl_easy_getinfo", &api.easy_getinfo, &missing) &&
                  Bind(lib, "curl_easy_strerror", &api.easy_strerror, &missing) &&
                  Bind(lib, "curl_easy_pause", &api.easy_pause, &missing) &&
                  Bind(lib, "curl_multi_init", &api.multi_init, &missing) &&
                  Bind(lib, "curl_multi_cleanup", &api.multi_cleanup, &missing) &&
                  Bind(lib, "curl_multi_add_handle", &api.multi_add_handle, &missing) &&
                  Bind(lib, "curl_multi_remove_handle", &api.multi_remove_handle, &missing) &&
                  Bind(lib, "curl_multi_perform", &api.multi_perform, &missing) &&
                  Bind(lib, "curl_multi_poll", &api.multi_poll, &missing) &&
                  Bind(lib, "curl_multi_info_read", &api.multi_info_read, &missing) &&
                  Bind(lib, "curl_slist_append", &api.slist_append, &missing) &&
                  Bind(lib, "curl_slist_free_all", &api.slist_free_all, &missing) &&
                  Bind(lib, "curl_url", &api.url, &missing) &&
                  Bind(lib, "curl_url_cleanup", &api.url_cleanup, &missing) &&
                  Bind(lib, "curl_url_set", &api.url_set, &missing) &&
                  Bind(lib, "curl_url_get", &api.url_get, &missing) &&
                  Bind(lib, "curl_free", &api.free, &missing);
  if (!ok) return absl::UnavailableError(absl::StrCat("libcurl.so.4 lacks ", missing, " (libcurl 7.80 or later needed)"));
  if (api.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) return absl::UnavailableError("curl_global_init failed");
  return absl::OkStatus();
}

}  // namespace

absl::Status LoadCurl() {
  static std::once_flag once;
  std::call_once(once, [] { load_status = Load(); });
  return load_status;
}

const CurlApi& Curl() { return api; }

}  // namespace ggufguard
