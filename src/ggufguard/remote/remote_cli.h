// The command line's side of remote files: the flags validate, inspect and
// scan take (--token-file, --connect-timeout, --idle-timeout, --timeout,
// --min-rate), the token from
// HF_TOKEN or the file, and one input's validation. cli.cc and scan.cc call
// these, so their own edits stay a few lines.
#ifndef GGUFGUARD_REMOTE_REMOTE_CLI_H_
#define GGUFGUARD_REMOTE_REMOTE_CLI_H_

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "ggufguard/remote/remote_validate.h"
#include "ggufguard/split/split_set.h"

namespace ggufguard {

struct RemoteFlags {
  std::optional<std::string> token_file;
  RemoteOptions remote;  // the token is loaded into it by LoadRemoteToken
  // --timeout S and --min-rate B/s; unset: the policy's max_remote_seconds
  // and min_remote_bytes_per_second (RemoteOptionsFor).
  std::optional<uint32_t> timeout_s;
  std::optional<uint32_t> min_rate;
  // --no-siblings: no sibling template file is read (JudgeSiblingsOf).
  bool siblings = true;
};

// The options one remote file is read with: the flags, else the policy's
// deadline and minimum rate; the policy's byte budget.
RemoteOptions RemoteOptionsFor(const RemoteFlags& flags, const Policy& policy);

// When args[*i] is a remote flag: consumes it and its value (advancing *i)
// and returns true; a bad or missing value is written to `err` and sets
// *bad. False for any other argument.
bool ParseRemoteFlag(const std::vector<std::string>& args, size_t* i, RemoteFlags* flags, std::ostream& err,
                     bool* bad);

// hf://ORG/REPO[@REV]/PATH: a file of a hub repository, whose directory
// holds the repository's sibling files.
bool IsHubArgument(std::string_view arg);

// Reads the sibling template files of `location` (provenance/siblings.h:
// chat_template.jinja, chat_template.json, tokenizer_config.json in its
// directory), each bounded by the policy's max_sibling_file_bytes, and
// judges `file`'s templates against them (GG8033-GG8035). A local location
// is opened as `links` says; an hf:// one through HttpSource with `flags`,
// what its requests cost added to *spent. Nothing is read when the file has
// no template, when --no-siblings was given, or for any other location
// (standard input, a plain URL).
void JudgeSiblingsOf(const std::string& location, ValidatedFile& file, const Policy& policy, const RemoteFlags& flags,
                     FinalLink links, TransferStats* spent);

// The token: --token-file's first line, else $HF_TOKEN, else none. False,
// with the reason on `err` (never the file's contents), when the file
// cannot be read.
bool LoadRemoteToken(RemoteFlags* flags, std::ostream& err);

// Resolves `arg` (ResolveLocation) and validates it; a location that is
// refused is an error like one that cannot be fetched.
RemoteValidation ValidateRemoteArgument(const std::string& arg, const Policy& policy, const RemoteFlags& flags,
                                        bool hash, bool header_only, bool fail_fast, const DeepOptions& deep);

// Opens a split set's shards where they live: a remote location
// (IsRemoteArgument) through HttpSource with RemoteOptionsFor(flags,
// policy) (a 404 is NotFound, so the set reports the shard missing), any
// other through `local`.
ShardOpener RemoteAwareShardOpener(const RemoteFlags& flags, const Policy& policy, ShardOpener local);

}  // namespace ggufguard

#endif  // GGUFGUARD_REMOTE_REMOTE_CLI_H_
