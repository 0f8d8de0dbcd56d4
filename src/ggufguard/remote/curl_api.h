// libcurl, loaded when a remote file is first asked for (dlopen of
// Debian's libcurl.so.4), not at every start of the process: linking it
// brings ~30 shared libraries (OpenSSL, GnuTLS, Kerberos, LDAP...) whose
// loading and constructors cost a gatekeeper that validates local files
// more than the validation itself (docs/remote.md, "Cost"). The headers
// are the installed ones (FindCURL), so every call is type-checked against
// the same API; Curl() is the one way the remote code reaches libcurl.
#ifndef GGUFGUARD_REMOTE_CURL_API_H_
#define GGUFGUARD_REMOTE_CURL_API_H_

#include <curl/curl.h>

#include "absl/status/status.h"

namespace ggufguard {

struct CurlApi {
  CURLcode (*global_init)(long);
  CURL* (*easy_init)();
  void (*easy_cleanup)(CURL*);
  void (*easy_reset)(CURL*);
  CURLcode (*easy_setopt)(CURL*, CURLoption, ...);
  CURLcode (*easy_perform)(CURL*);
  CURLcode (*easy_getinfo)(CURL*, CURLINFO, ...);
  const char* (*easy_strerror)(CURLcode);
  CURLcode (*easy_pause)(CURL*, int);
  CURLM* (*multi_init)();
  CURLMcode (*multi_cleanup)(CURLM*);
  CURLMcode (*multi_add_handle)(CURLM*, CURL*);
  CURLMcode (*multi_remove_handle)(CURLM*, CURL*);
  CURLMcode (*multi_perform)(CURLM*, int*);
  CURLMcode (*multi_poll)(CURLM*, struct curl_waitfd[], unsigned int, int, int*);
  CURLMsg* (*multi_info_read)(CURLM*, int*);
  struct curl_slist* (*slist_append)(struct curl_slist*, const char*);
  void (*slist_free_all)(struct curl_slist*);
  CURLU* (*url)();
  void (*url_cleanup)(CURLU*);
  CURLUcode (*url_set)(CURLU*, CURLUPart, const char*, unsigned int);
  CURLUcode (*url_get)(const CURLU*, CURLUPart, char**, unsigned int);
  void (*free)(void*);
};

// Loads libcurl and runs curl_global_init once (thread-safe); an error
// (libcurl4 not installed, a symbol missing) says which. Only after it
// succeeded may Curl() be called.
absl::Status LoadCurl();
const CurlApi& Curl();

}  // namespace ggufguard

#endif  // GGUFGUARD_REMOTE_CURL_API_H_
