#include "ggufguard/base/sha256.h"

#include "absl/strings/escaping.h"

namespace ggufguard {

std::string Sha256::HexDigest() {
  uint8_t md[SHA256_DIGEST_SIZE];
  sha256_digest(&ctx_, sizeof md, md);
  return absl::BytesToHexString(absl::string_view(reinterpret_cast<const char*>(md), sizeof md));
}

std::string Sha256Hex(std::string_view data) {
  Sha256 h;
  h.Update(reinterpret_cast<const uint8_t*>(data.data()), data.size());
  return h.HexDigest();
}

}  // namespace ggufguard
