// 7006-7008 and 7011: what llama.cpp's vocabulary loader (llama_vocab::impl::load,
// src/llama-vocab.cpp) cannot get past: a vocabulary model it does not
// know, a BPE pre-tokenizer it does not know, a special token it is told
// to add to every prompt that resolves to no id (each throws, so llama.cpp
// cannot load the file at all), and an RWKV vocabulary on which its search
// for the newline token never ends. The names come from
// the generated vocab_tables.inc (scripts/gen_vocab_tables.py); the defaults
// below are the loader's, read at the commit the table names.
#include <algorithm>
#include <array>
#include <initializer_list>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "ggufguard/base/sv.h"
#include "ggufguard/base/text.h"
#include "ggufguard/rules/key_groups.h"
#include "ggufguard/rules/rules.h"
#include "ggufguard/rules/vocab_tables.h"

namespace ggufguard {
namespace {

#include "ggufguard/rules/vocab_tables.inc"

}  // namespace

const LlamaTokenizerModel* FindLlamaTokenizerModel(std::string_view name) {
  name = CString(name);
  for (const LlamaTokenizerModel& m : kLlamaTokenizerModels) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

bool KnownLlamaPreTokenizer(std::string_view name) {
  return std::binary_search(std::begin(kLlamaPreTokenizers), std::end(kLlamaPreTokenizers), CString(name));
}

std::string_view VocabTablesCommit() { return kVocabTablesCommit; }

namespace {

// A string value, or nullopt for another type (GG4004's business: the
// loader's get_key throws on it).
std::optional<std::string_view> StringOf(const KeyValue* kv) {
  if (kv == nullptr || kv->type() != ValueType::kString) return std::nullopt;
  return CString(kv->value().AsString());
}

constexpr int64_t kNull = -1;  // LLAMA_TOKEN_NULL

// One of the three tokens the loader may add to every prompt.
struct AddedToken {
  std::string_view name;      // "bos", "eos", "sep"
  int64_t default_id;         // the model type's default, before the file's keys
  bool default_add;           // whether the model type adds it by default
};

// The defaults llama_vocab::impl::load sets per vocabulary type (and, for BPE,
// per pre-tokenizer) before it reads tokenizer.ggml.{bos,eos,seperator}_token_id
// and tokenizer.ggml.add_{bos,eos,sep}_token.
std::array<AddedToken, 3> LoaderDefaults(std::string_view type, std::string_view pre) {
  std::array<AddedToken, 3> t = {AddedToken{"bos", kNull, false}, AddedToken{"eos", kNull, false},
                                 AddedToken{"sep", kNull, false}};
  auto set = [&](int64_t bos, int64_t eos, int64_t sep) {
    t[0].default_id = bos, t[1].default_id = eos, t[2].default_id = sep;
  };
  if (type == "spm") {
    set(1, 2, kNull);
    t[0].default_add = true;
  } else if (type == "wpm") {
    set(101, kNull, 102);
    t[0].default_add = t[2].default_add = true;
  } else if (type == "bpe") {
    // gpt2's ids, except gemma4's, which come from the file only.
    if (pre == "gemma4") {
      set(kNull, kNull, kNull);
    } else {
      set(11, 11, kNull);
    }
    static constexpr std::string_view kAddsBos[] = {"llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1",
                                                    "pixtral", "midm-2.0", "lfm2", "jina-v5-nano", "tekken",
                                                    "chameleon"};
    static constexpr std::string_view kAddsSep[] = {"jina-v1-en", "jina-v2-code", "roberta-bpe"};
    t[0].default_add = std::find(std::begin(kAddsBos), std::end(kAddsBos), pre) != std::end(kAddsBos);
    t[2].default_add = std::find(std::begin(kAddsSep), std::end(kAddsSep), pre) != std::end(kAddsSep);
    if (pre == "glm4" || pre == "chatglm-bpe") t[0].default_id = kNull;
  } else if (type == "ugm") {
    set(kNull, 1, kNull);
    t[1].default_add = true;
  } else if (type == "plamo2") {
    set(1, 2, kNull);
  }
  return t;  // rwkv: none of them
}

void CheckAddedTokens(RuleContext& ctx, const KeyIndex& keys, const LlamaTokenizerModel& model, std::string_view pre,
                      uint64_t n_tokens) {
  const std::array<AddedToken, 3> tokens = LoaderDefaults(model.vocab_type, pre);
  static constexpr std::string_view kIdKey[] = {"tokenizer.ggml.bos_token_id", "tokenizer.ggml.eos_token_id",
                                                "tokenizer.ggml.seperator_token_id"};
  static constexpr std::string_view kAddKey[] = {"tokenizer.ggml.add_bos_token", "tokenizer.ggml.add_eos_token",
                                                 "tokenizer.ggml.add_sep_token"};
  for (size_t i = 0; i < tokens.size(); ++i) {
    // A default outside the vocabulary is disabled; the file's id replaces
    // it only when inside (else the loader warns and keeps the default).
    int64_t id = tokens[i].default_id;
    if (id >= 0 && static_cast<uint64_t>(id) >= n_tokens) id = kNull;
    const KeyValue* id_kv = keys.Find(kIdKey[i]);
    if (id_kv != nullptr && id_kv->type() == ValueType::kUint32) {
      const uint64_t file_id = *id_kv->value().AsUnsigned();
      if (file_id < n_tokens) id = static_cast<int64_t>(file_id);
    } else if (id_kv != nullptr) {
      continue;  // get_key refuses another type: GG4004
    }
    bool add = tokens[i].default_add;
    const KeyValue* add_kv = keys.Find(kAddKey[i]);
    if (add_kv != nullptr && add_kv->type() == ValueType::kBool) {
      add = *add_kv->value().AsUnsigned() != 0;
    } else if (add_kv != nullptr) {
      continue;  // GG4004
    }
    // Gemma 4's pre-tokenizer forces add_bos (llama.cpp #21500).
    if (i == 0 && pre == "gemma4") add = true;
    if (!add || id != kNull) continue;
    const uint64_t at = add_kv != nullptr ? add_kv->value().offset
                        : id_kv != nullptr ? id_kv->value().offset
                                           : keys.Find("tokenizer.ggml.model")->value().offset;
    ctx.sink.Add(RuleId::kAddSpecialTokenUnset, at,
                 absl::StrCat(Sv(tokens[i].name), " is added to every prompt (",
                              add_kv != nullptr ? absl::StrCat(Sv(kAddKey[i]), " is true")
                                                : absl::StrCat("the default of a '", Sv(model.name), "' vocabulary",
                                                               pre.empty() ? "" : absl::StrCat(" with pre '",
                                                                                               EscapeForDisplay(pre), "'")),
                              "), but its id resolves to none: ",
                              id_kv != nullptr ? absl::StrCat(Sv(kIdKey[i]), " is outside the ", n_tokens, " tokens")
                                               : absl::StrCat(Sv(kIdKey[i]), " is absent and the default is not a token"),
                              "; llama.cpp's vocabulary loader throws"));
  }
}

// The first `max` bytes of llama_unescape_rwkv_token(escaped): \t \n \r,
// \xHH (each digit read as c >= 'a' ? c - 'a' + 10 : c - '0', so other
// letters give other bytes, as in the loader), \c for any other c.
std::string UnescapeRwkvPrefix(std::string_view escaped, size_t max) {
  std::string out;
  uint8_t hex_remaining = 0, hex_acc = 0;
  bool escaping = false;
  for (const char c : escaped) {
    if (out.size() >= max) break;
    if (hex_remaining != 0) {
      const uint8_t value = static_cast<uint8_t>(c >= 'a' ? c - 'a' + 10 : c - '0');
      hex_acc = static_cast<uint8_t>((hex_acc << 4) + value);
      if (--hex_remaining == 0) {
        out.push_back(static_cast<char>(hex_acc));
        hex_acc = 0;
      }
    } else if (escaping) {
      if (c == 'x') {
        hex_remaining = 2;
      } else {
        out.push_back(c == 't' ? '\t' : c == 'n' ? '\n' : c == 'r' ? '\r' : c);
      }
      escaping = false;
    } else if (c == '\\') {
      escaping = true;
    } else {
      out.push_back(c);
    }
  }
  return out;
}

// GG7011. To find the newline token, the loader tokenizes "\n" with the
// RWKV tokenizer (llm_tokenizer_rwkv_session::tokenize), which walks a trie
// of the unescaped token texts for the longest token. When some token
// starts with a newline but none is one, the walk ends with a match of
// length 0, and the loop starts again at the same position, forever, adding
// a token each time: the process spins until memory runs out. (The
// GGML_ASSERT that the result is not empty, which follows, cannot fail: an
// unmatched byte gives the unknown token. A special token that the
// special-token pass could match first is spelled "\n", so it is itself a
// newline token.)
void CheckRwkvNewline(RuleContext& ctx, const ArrayView& tokens) {
  if (!ctx.sink.Enabled(RuleId::kRwkvNewlineHang) || tokens.element_type != ValueType::kString) return;
  std::optional<std::pair<uint64_t, uint64_t>> first_prefix;  // (id, offset) of a token starting with "\n"
  bool newline_token = false;
  tokens.ForEachString(tokens.count, [&](uint64_t i, std::string_view text, uint64_t at) {
    // gguf_get_arr_str, read into a std::string: cut at NUL.
    const std::string head = UnescapeRwkvPrefix(CString(text), 2);
    if (head.empty() || head[0] != '\n') return true;
    // A token "\n" ends the search; so does one spelled "\n\x00", whose
    // trie node the walk reaches through the text's terminating NUL (and
    // then reads past it: not a certain hang, so not this rule).
    if (head.size() == 1 || head[1] == '\0') newline_token = true;
    if (!first_prefix) first_prefix.emplace(i, at);
    return !newline_token;
  });
  if (newline_token || !first_prefix) return;
  ctx.sink.Add(RuleId::kRwkvNewlineHang, first_prefix->second,
               absl::StrCat("token ", first_prefix->first,
                            " of this RWKV vocabulary starts with a newline and no token is one: llama.cpp's RWKV "
                            "tokenizer loops forever on \"\\n\" as the vocabulary loads (its output grows until "
                            "memory runs out)"));
}

bool ContainsAny(std::string_view s, std::initializer_list<std::string_view> parts) {
  for (std::string_view p : parts) {
    if (s.find(p) != std::string_view::npos) return true;
  }
  return false;
}

// Whether `s`, lower-cased as std::tolower does in the "C" locale, contains
// `lower` (lower-case ASCII): without the loader's copy of the name, which
// a name of a gigabyte would make costly.
bool ContainsLowered(std::string_view s, std::string_view lower) {
  auto low = [](char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; };
  for (size_t i = 0; i + lower.size() <= s.size(); ++i) {
    size_t k = 0;
    while (k < lower.size() && low(s[i + k]) == lower[k]) ++k;
    if (k == lower.size()) return true;
  }
  return false;
}

// GG9164. The loader's last step sets per-token attributes by the file's
// names: when general.name, lower-cased, contains "phi-3" or "phi3" (and
// neither tokenizer.ggml.pre names a jina-v2 model nor the architecture is
// nomic-bert-moe or jina-bert-v3, which take the branch before), it looks up
// "</s>", then "<unk>", "<s>" and "<|endoftext|>" with token_to_id.at(), and
// the first one the vocabulary lacks throws std::out_of_range
// ("unordered_map::at"): the file does not load. A vocabulary without
// those four (a byte-level BPE one, say) under a phi-3 name hits it.
void CheckPhi3Tokens(RuleContext& ctx, const KeyIndex& keys, const ArrayView& tokens) {
  if (!ctx.sink.Enabled(RuleId::kPhi3TokenMissing) || tokens.element_type != ValueType::kString) return;
  const KeyValue* name_kv = keys.Find("general.name");
  const std::optional<std::string_view> name = StringOf(name_kv);
  if (!name) return;  // absent: no name to match; another type: get_key throws (GG4004)
  if (!ContainsLowered(*name, "phi-3") && !ContainsLowered(*name, "phi3")) return;
  const std::optional<std::string_view> pre = StringOf(keys.Find("tokenizer.ggml.pre"));
  const std::optional<std::string_view> arch = StringOf(keys.arch_kv());
  if ((pre && ContainsAny(*pre, {"jina-v2-de", "jina-v2-es", "jina-v2-code"})) ||
      (arch && ContainsAny(*arch, {"nomic-bert-moe", "jina-bert-v3"}))) {
    return;
  }
  static constexpr std::string_view kLookedUp[] = {"</s>", "<unk>", "<s>", "<|endoftext|>"};
  bool found[std::size(kLookedUp)] = {};
  tokens.ForEachString(tokens.count, [&](uint64_t, std::string_view text, uint64_t) {
    const std::string_view word = CString(text);  // gguf_get_arr_str, into a std::string
    for (size_t i = 0; i < std::size(kLookedUp); ++i) found[i] = found[i] || word == kLookedUp[i];
    return true;
  });
  for (size_t i = 0; i < std::size(kLookedUp); ++i) {
    if (found[i]) continue;
    ctx.sink.Add(RuleId::kPhi3TokenMissing, name_kv->value().offset,
                 absl::StrCat("general.name '", EscapeForDisplay(*name, 80),
                              "' makes llama.cpp's vocabulary loader treat this as a phi-3 vocabulary and look up "
                              "</s>, <unk>, <s> and <|endoftext|> to set their strip attributes; it has no token '",
                              EscapeForDisplay(kLookedUp[i]), "', so the lookup throws (unordered_map::at) and the "
                              "file does not load"));
    return;  // the first missing one throws
  }
}

}  // namespace

void CheckVocabularyLoad(RuleContext& ctx, const KeyIndex& keys) {
  const KeyValue* model_kv = keys.Find("tokenizer.ggml.model");
  const std::optional<std::string_view> name = StringOf(model_kv);
  if (!name) return;  // absent: GG4008 where a model needs one; another type: GG4004
  const LlamaTokenizerModel* model = FindLlamaTokenizerModel(*name);
  if (model == nullptr) {
    ctx.sink.Add(RuleId::kUnknownTokenizerModel, model_kv->value().offset,
                 absl::StrCat("tokenizer.ggml.model '", EscapeForDisplay(*name),
                              "' is no vocabulary llama.cpp loads (it throws \"unknown tokenizer\"); it knows ",
                              std::size(kLlamaTokenizerModels), " names, llama.cpp ", Sv(kVocabTablesCommit.substr(0, 12))));
    return;
  }
  if (model->vocab_type == "none") return;
  std::string_view pre;
  const KeyValue* pre_kv = keys.Find("tokenizer.ggml.pre");
  if (model->reads_pre) {
    if (pre_kv != nullptr && pre_kv->type() != ValueType::kString) return;  // GG4004
    pre = pre_kv != nullptr ? CString(pre_kv->value().AsString()) : std::string_view();
    if (!pre.empty() && pre != "default" && !KnownLlamaPreTokenizer(pre)) {
      ctx.sink.Add(RuleId::kUnknownPreTokenizer, pre_kv->value().offset,
                   absl::StrCat("tokenizer.ggml.pre '", EscapeForDisplay(pre), "' is no pre-tokenizer llama.cpp knows for a '",
                                Sv(model->name), "' vocabulary (it throws \"unknown pre-tokenizer type\"); llama.cpp ",
                                Sv(kVocabTablesCommit.substr(0, 12)), " knows ", std::size(kLlamaPreTokenizers)));
      return;
    }
  } else if (model->name == "gemma4") {
    pre = "gemma4";  // the loader sets it whatever the file says
  }
  const KeyValue* tokens_kv = keys.Find(kTokenArrayKey);
  if (tokens_kv == nullptr || tokens_kv->type() != ValueType::kArray) return;  // the loader throws: GG4008/GG4004
  const uint64_t n_tokens = static_cast<uint32_t>(tokens_kv->value().array.count);  // read as a uint32_t
  if (model->vocab_type == "rwkv") CheckRwkvNewline(ctx, tokens_kv->value().array);
  CheckAddedTokens(ctx, keys, *model, pre, n_tokens);
  CheckPhi3Tokens(ctx, keys, tokens_kv->value().array);
}

}  // namespace ggufguard
