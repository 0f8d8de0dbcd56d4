// SHA-256, incrementally: chat templates, and whole files in the pass that
// streams them.
#ifndef GGUFGUARD_BASE_SHA256_H_
#define GGUFGUARD_BASE_SHA256_H_

#include <nettle/sha2.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace ggufguard {

// Nettle, not OpenSSL: OpenSSL 3 loads its provider machinery on the first
// digest, which cost ~1.3 ms of CPU per process here, plus ~1 ms to load
// libcrypto.so at all; nettle's SHA-256 is a plain function with no global
// state (it uses the CPU's SHA instructions where there are any), linked from
// its static archive (docs/performance.md, "Whole process").
class Sha256 {
 public:
  Sha256() { sha256_init(&ctx_); }
  void Update(const uint8_t* data, size_t n) { sha256_update(&ctx_, n, data); }
  // The digest in lower-case hex; the object starts over afterwards.
  std::string HexDigest();

 private:
  sha256_ctx ctx_;
};

std::string Sha256Hex(std::string_view data);

}  // namespace ggufguard

#endif  // GGUFGUARD_BASE_SHA256_H_
