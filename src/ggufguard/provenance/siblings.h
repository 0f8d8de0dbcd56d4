// The chat templates a GGUF's own repository publishes beside it (`scan` of
// a directory, `hf://` files): chat_template.jinja, chat_template.json and
// tokenizer_config.json's "chat_template" (a string, or a list of
// {"name", "template"} as gguf-py and transformers write it), read bounded
// and compared with the GGUF's templates under the same normal form
// (docs/provenance.md, GG8033-GG8035).
//
// Every sibling is opened through the caller's opener (the one that opens
// a split set's shards: a local path through FileSource, refusing a link
// unless the user follows links; an hf:// location through HttpSource) and
// read by ReadBounded, the one function that reads a sibling's bytes: its
// size is known before anything is read and a file over the policy's
// max_sibling_file_bytes is not read at all. JSON is read with
// nlohmann-json's SAX parser, keeping only the "chat_template" value, so
// memory is the templates kept plus a constant, whatever the file holds.
#ifndef GGUFGUARD_PROVENANCE_SIBLINGS_H_
#define GGUFGUARD_PROVENANCE_SIBLINGS_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "ggufguard/findings/policy.h"
#include "ggufguard/io/source.h"
#include "ggufguard/provenance/provenance.h"

namespace ggufguard {

class ValidatedFile;

// The files read, in the order the converter prefers them (gguf-py's
// SpecialVocab: tokenizer_config.json's chat_template, else
// chat_template.jinja, else chat_template.json).
inline constexpr std::string_view kSiblingFiles[] = {"tokenizer_config.json", "chat_template.jinja",
                                                     "chat_template.json"};

struct SiblingTemplate {
  std::string file;  // one of kSiblingFiles
  std::string name;  // "default", or a named template's name as gguf-py writes it (non-alphanumerics as '_')
  std::string text;
};

struct SiblingFile {
  std::string file;
  enum class State { kAbsent, kRead, kSkipped, kInvalid };
  State state = State::kAbsent;
  std::string reason;  // kSkipped, kInvalid: why, printable ASCII
  uint64_t bytes = 0;  // kRead: how many
};
const char* SiblingStateName(SiblingFile::State state);  // "absent", "read", "skipped", "invalid"

struct SiblingSet {
  std::vector<SiblingFile> files;          // one per kSiblingFiles entry
  std::vector<SiblingTemplate> templates;  // in kSiblingFiles order
};

// A sibling's bytes: absent (the opener said NotFound), read, or skipped
// with the reason (too large, a link, not a regular file, an I/O error).
struct BoundedRead {
  SiblingFile::State state = SiblingFile::State::kAbsent;
  std::string bytes;
  std::string reason;
};
BoundedRead ReadBounded(absl::StatusOr<std::unique_ptr<ByteSource>> opened, uint64_t max_bytes);

// The templates a sibling file's bytes hold, or why they hold none
// (invalid: not UTF-8, not JSON, chat_template of another type).
void ParseSiblingFile(std::string_view file, std::string_view bytes, SiblingFile* status,
                      std::vector<SiblingTemplate>* out);

// `name` in the directory of `location` (a path or an hf:// location).
std::string SiblingLocation(std::string_view location, std::string_view name);

using SiblingOpener = std::function<absl::StatusOr<std::unique_ptr<ByteSource>>(const std::string& location)>;
SiblingSet ReadSiblings(std::string_view gguf_location, const SiblingOpener& open, uint64_t max_bytes);

// How one of the GGUF's templates compares with its repository's.
struct SiblingComparison {
  std::string file;    // the sibling file it is compared with
  std::string name;    // "default" or NAME
  bool same = false;   // the same normal form as that file's
  // Not the same: the difference, or nullopt when they differ in more than
  // kMaxEdits segments.
  std::optional<TemplateDiff> diff;
  uint64_t their_bytes = 0;
};

// Compares each of `file`'s templates with the siblings of the same name,
// records the comparisons in its report (TemplateDigest::siblings,
// TemplateDigests::sibling_files) and adds GG8033 for a template that
// matches none of its repository's, GG8034 for an invalid sibling and
// GG8035 for a skipped one, under `policy`.
void JudgeAgainstSiblings(ValidatedFile& file, const SiblingSet& siblings, const Policy& policy);

}  // namespace ggufguard

#endif  // GGUFGUARD_PROVENANCE_SIBLINGS_H_
