// What fetching one remote file cost: requests made and bytes received
// (headers and bodies, every response of a redirect chain included).
#ifndef GGUFGUARD_REMOTE_TRANSFER_STATS_H_
#define GGUFGUARD_REMOTE_TRANSFER_STATS_H_

#include <cstdint>

namespace ggufguard {

struct TransferStats {
  uint64_t requests = 0;
  uint64_t bytes = 0;
};

}  // namespace ggufguard

#endif  // GGUFGUARD_REMOTE_TRANSFER_STATS_H_
