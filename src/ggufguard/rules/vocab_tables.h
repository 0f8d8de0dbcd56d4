// The vocabulary models and pre-tokenizers llama.cpp's vocabulary loader
// accepts, from the generated vocab_tables.inc (scripts/gen_vocab_tables.py):
// the one source the vocabulary rules (tokenizer_rules.cc,
// vocab_load_rules.cc) read.
#ifndef GGUFGUARD_RULES_VOCAB_TABLES_H_
#define GGUFGUARD_RULES_VOCAB_TABLES_H_

#include <string_view>

namespace ggufguard {

struct LlamaTokenizerModel {
  std::string_view name;
  std::string_view vocab_type;  // "spm", "wpm", "bpe", "ugm", "rwkv", "plamo2", "none"
  bool reads_pre;               // a BPE vocabulary that takes tokenizer.ggml.pre from the file
};

// The model llama.cpp builds for tokenizer.ggml.model `name` (as its
// get_key reads it: a C string, cut at its first NUL), or nullptr where it
// throws "unknown tokenizer".
const LlamaTokenizerModel* FindLlamaTokenizerModel(std::string_view name);
// Whether a BPE vocabulary accepts this tokenizer.ggml.pre (C string too).
bool KnownLlamaPreTokenizer(std::string_view name);
// The commit the table was generated from.
std::string_view VocabTablesCommit();

}  // namespace ggufguard

#endif  // GGUFGUARD_RULES_VOCAB_TABLES_H_
