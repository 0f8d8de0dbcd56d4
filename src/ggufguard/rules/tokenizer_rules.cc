// 7xxx: the vocabulary. llama.cpp's vocabulary loader trusts these arrays: it
// reads scores and token types one per token straight from the array data,
// indexes its tables with the special token ids, and parses every BYTE token
// as "<0xNN>". Every check here is a flat loop over the array bytes with no
// per-token allocation (a SmolLM2 header has 49k tokens and 49k merges);
// only the opt-in merge check builds a hash set.
#include <algorithm>
#include <array>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"
#include "ggufguard/base/hash_screen.h"
#include "ggufguard/base/sv.h"
#include "ggufguard/base/text.h"
#include "ggufguard/base/text_hash.h"
#include "ggufguard/parse/parser.h"
#include "ggufguard/rules/rules.h"
#include "ggufguard/rules/vocab_tables.h"

namespace ggufguard {
namespace {

constexpr int32_t kTokenTypeByte = 6;  // llama_token_type: 1 NORMAL .. 6 BYTE
constexpr uint64_t kNone = ~uint64_t{0};

std::optional<ArrayView> ArrayOf(const KeyValue* kv, ValueType element) {
  if (kv == nullptr || kv->type() != ValueType::kArray) return std::nullopt;
  const Value v = kv->value();
  if (v.array.element_type != element) return std::nullopt;
  return v.array;
}

// Calls f(index, string, file offset of its bytes) for strings [0, end).
template <typename F>
void ForEachString(const ArrayView& a, uint64_t end, F&& f) {
  a.ForEachString(end, [&](uint64_t i, std::string_view s, uint64_t at) {
    f(i, s, at);
    return true;
  });
}

int32_t TokenTypeAt(const ArrayView& types, uint64_t i) { return static_cast<int32_t>(types.ScalarAt<uint32_t>(i)); }

// One pass over the token types: how many lie outside 1..6, and the last
// BYTE token (so the byte-token walk can stop there: SPM vocabularies keep
// their 256 byte tokens near the start, BPE ones have none).
struct TypeScan {
  uint64_t out_of_range = 0;
  uint64_t last_byte = kNone;
};

template <bool kBig>
uint32_t TypeAt(const uint8_t* p, uint64_t i) {
  uint32_t v;
  std::memcpy(&v, p + 4 * i, 4);
  if constexpr (kBig) v = __builtin_bswap32(v);
  return v;
}

// Chunks of 1024 types: within a chunk no value depends on the one before,
// so the compiler vectorises the loop (little-endian files; a big-endian
// file's byte swap keeps it scalar), and only "this chunk has a BYTE token"
// leaves it. (Tracking the last BYTE index per element was a select chained
// through every element: ~150 us for the 4x benchmark's 196,000 tokens.)
// The exact index is then found in the last chunk that has one.
template <bool kBig>
TypeScan ScanTypes(const uint8_t* p, uint64_t n) {
  constexpr uint64_t kChunk = 1024;
  TypeScan s;
  uint64_t last_byte_chunk = kNone;
  for (uint64_t begin = 0; begin < n; begin += kChunk) {
    const uint64_t end = n - begin < kChunk ? n : begin + kChunk;
    uint32_t out_of_range = 0, has_byte = 0;
    for (uint64_t k = begin; k < end; ++k) {
      const uint32_t v = TypeAt<kBig>(p, k);
      out_of_range += (v - 1u) > 5u;
      has_byte |= v == static_cast<uint32_t>(kTokenTypeByte);
    }
    s.out_of_range += out_of_range;
    if (has_byte != 0) last_byte_chunk = begin;
  }
  if (last_byte_chunk == kNone) return s;
  const uint64_t chunk_end = n - last_byte_chunk < kChunk ? n : last_byte_chunk + kChunk;
  for (uint64_t k = chunk_end; k > last_byte_chunk; --k) {
    if (TypeAt<kBig>(p, k - 1) == static_cast<uint32_t>(kTokenTypeByte)) {
      s.last_byte = k - 1;
      break;
    }
  }
  return s;
}

bool IsHex(char c) { return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'F') || (c >= 'a' && c <= 'f'); }
bool IsByteToken(std::string_view s) {
  return s.size() == 6 && s.substr(0, 3) == "<0x" && IsHex(s[3]) && IsHex(s[4]) && s[5] == '>';
}

void CheckLengths(RuleContext& ctx, const KeyIndex& keys, uint64_t n_tokens) {
  for (std::string_view name : {"tokenizer.ggml.scores", "tokenizer.ggml.token_type"}) {
    const KeyValue* kv = keys.Find(name);
    if (kv == nullptr || kv->type() != ValueType::kArray || kv->value().array.count == n_tokens) continue;
    ctx.sink.Add(RuleId::kVocabLengthMismatch, kv->value().offset,
                 absl::StrCat("'", Sv(name), "' has ", kv->value().array.count, " elements for ", n_tokens,
                              " tokens: llama.cpp reads one per token from the array's data",
                              kv->value().array.count < n_tokens ? ", past its end" : ""));
  }
}

void CheckTokenTypes(RuleContext& ctx, const KeyIndex& keys, const ArrayView* tokens) {
  const KeyValue* kv = keys.Find("tokenizer.ggml.token_type");
  const std::optional<ArrayView> types = ArrayOf(kv, ValueType::kInt32);
  if (!types.has_value()) return;  // absent, or GG4004
  const uint8_t* p = types->element_bytes.data();
  const TypeScan scan = types->order == ByteOrder::kBig ? ScanTypes<true>(p, types->count)
                                                        : ScanTypes<false>(p, types->count);
  RuleReporter bad_type(ctx, RuleId::kTokenTypeValue);
  if (scan.out_of_range > 0 && bad_type.enabled()) {
    for (uint64_t i = 0; i < types->count; ++i) {
      int32_t t = TokenTypeAt(*types, i);
      if (t < 1 || t > 6) {
        bad_type.Add(types->elements_offset + 4 * i, [&] {
          return absl::StrCat("token ", i, " has token_type ", t, ", outside 1..6 (NORMAL..BYTE)");
        });
      }
    }
  }
  RuleReporter bad_byte(ctx, RuleId::kByteTokenFormat);
  if (scan.last_byte == kNone || tokens == nullptr || !bad_byte.enabled()) return;
  ForEachString(*tokens, scan.last_byte + 1, [&](uint64_t i, std::string_view s, uint64_t at) {
    if (TokenTypeAt(*types, i) == kTokenTypeByte && !IsByteToken(s)) {
      bad_byte.Add(at, [&] {
        return absl::StrCat("token ", i, " '", EscapeForDisplay(s), "' has type BYTE but is not <0xNN>: ",
                            "llama.cpp parses text.substr(3, 2) of it as the byte");
      });
    }
  });
}

bool IsIntegerType(ValueType t) {
  switch (t) {
    case ValueType::kUint8: case ValueType::kInt8: case ValueType::kUint16: case ValueType::kInt16:
    case ValueType::kUint32: case ValueType::kInt32: case ValueType::kUint64: case ValueType::kInt64:
      return true;
    default:
      return false;
  }
}

bool IsSpecialTokenKey(std::string_view key, std::string_view arch) {
  constexpr std::string_view kPrefix = "tokenizer.ggml.";
  constexpr std::string_view kSuffix = "_token_id";
  constexpr std::string_view kDecoderStart = ".decoder_start_token_id";  // {arch}., T5
  auto ends_with = [&](std::string_view s) { return key.size() >= s.size() && key.substr(key.size() - s.size()) == s; };
  if (key.substr(0, kPrefix.size()) == kPrefix && ends_with(kSuffix)) return true;
  return !arch.empty() && key.size() == arch.size() + kDecoderStart.size() && key.substr(0, arch.size()) == arch &&
         ends_with(kDecoderStart);
}

// Every key that is a special token id as a C string, not only the one
// llama.cpp resolves: another reader may pick a shadowed copy.
void CheckSpecialTokenIds(RuleContext& ctx, const KeyIndex& keys, uint64_t n_vocab) {
  RuleReporter report(ctx, RuleId::kSpecialTokenId);
  for (const KeyValue& kv : ctx.header.kvs) {
    if (!IsIntegerType(kv.type()) || !IsSpecialTokenKey(CStringKey(kv.key()), keys.arch())) continue;
    std::optional<uint64_t> id = kv.value().AsUnsigned();
    if (id && *id < n_vocab) continue;
    // "No such token": llama.cpp's saver writes an unset id (LLAMA_TOKEN_NULL)
    // as u32 0xFFFFFFFF, and {arch}.decoder_start_token_id as i32 -1, and
    // llama.cpp reads both back as unset. Any other id past the vocabulary
    // is an index some loader will use.
    const bool decoder_start = CStringKey(kv.key()).substr(0, 10) != "tokenizer.";
    if ((kv.type() == ValueType::kUint32 && id == 0xFFFFFFFFu) ||
        (decoder_start && kv.type() == ValueType::kInt32 && kv.value().AsSigned() == -1)) {
      continue;
    }
    report.Add(kv.value().offset, [&] {
      return absl::StrCat("'", EscapeForDisplay(kv.key()), "' is ",
                          id ? absl::StrCat(*id) : absl::StrCat(kv.value().AsSigned().value_or(-1)),
                          " but the vocabulary has ", n_vocab, " tokens: loaders index their token tables with it");
    });
  }
}

// llama.cpp splits a merge at the first space after its first byte
// (word.find(' ', 1)) and looks both halves up as tokens.
void CheckMerges(RuleContext& ctx, const KeyIndex& keys, const ArrayView& tokens) {
  const std::optional<ArrayView> merges = ArrayOf(keys.Find("tokenizer.ggml.merges"), ValueType::kString);
  RuleReporter report(ctx, RuleId::kMergeNotTokens);
  if (!merges.has_value() || !report.enabled()) return;
  absl::flat_hash_set<std::string_view> vocab;
  vocab.reserve(tokens.count);
  ForEachString(tokens, tokens.count, [&](uint64_t, std::string_view s, uint64_t) { vocab.insert(s); });
  ForEachString(*merges, merges->count, [&](uint64_t i, std::string_view m, uint64_t at) {
    size_t space = m.size() > 1 ? m.find(' ', 1) : std::string_view::npos;
    if (space == std::string_view::npos) {
      report.Add(at, [&] {
        return absl::StrCat("merge ", i, " '", EscapeForDisplay(m), "' is not two tokens separated by a space");
      });
      return;
    }
    for (std::string_view part : {m.substr(0, space), m.substr(space + 1)}) {
      if (!vocab.contains(part)) {
        report.Add(at, [&] {
          return absl::StrCat("merge ", i, " '", EscapeForDisplay(m), "': '", EscapeForDisplay(part),
                              "' is not a token");
        });
        return;
      }
    }
  });
}

// llama.cpp's vocabulary loader maps every token's text to its id and
// asserts that no two tokens share a text (GGML_ASSERT(id_to_token.size() ==
// token_to_id.size())): a repeated token aborts the load. The text is what
// gguf_get_arr_str gives, a C string (cut at its first NUL), and an empty
// one becomes "[EMPTY_<id>]". A first pass keeps only 64-bit hashes, the
// common case; the texts are compared only when two hashes meet.
// (GG9054, found by the loader oracle: fuzz/oracle.)
void CheckDuplicateTokens(RuleContext& ctx, const KeyIndex& keys, const KeyValue& tokens_kv, const ArrayView& tokens) {
  const KeyValue* model = keys.Find("tokenizer.ggml.model");
  if (model == nullptr || model->type() != ValueType::kString) return;  // llama.cpp refuses the file
  const std::string_view name = model->value().AsString();
  if (name == "no_vocab" || name == "none" || !ctx.sink.Enabled(RuleId::kDuplicateToken)) return;
  // Past the policy's vocabulary limit GG9003 rejects the file and this
  // does not run.
  if (tokens.count > ctx.policy.limits.max_vocab_size) return;
  auto text_of = [](uint64_t i, std::string_view s, std::string& renamed) -> std::string_view {
    s = s.substr(0, s.find('\0'));
    if (!s.empty()) return s;
    renamed = absl::StrCat("[EMPTY_", i, "]");
    return renamed;
  };
  // The hash of each token's text goes into a screen: the parser's, filled
  // in its walk of this array, when every text is the token's bytes (no
  // token empty, which llama.cpp renames, or holding a NUL, which it cuts
  // at); else, or when the parser did not screen it (a caller without
  // ParseOptions::screen), one filled here from the texts as llama.cpp
  // names them. The screen's memory is bounded by the input: the parser
  // proved the array's strings are there, 4 bytes of file or more each.
  const StringArrayScreen* parsed = ctx.token_screen;
  const bool parsed_applies = parsed != nullptr && parsed->kv_index().has_value() &&
                              &ctx.header.kvs[*parsed->kv_index()] == &tokens_kv && parsed->count() == tokens.count &&
                              tokens.empty_strings == 0 && !parsed->any_zero_byte();
  std::string renamed;
  std::optional<HashScreen> own;
  if (!parsed_applies) {
    HashScreen& screen = own.emplace(tokens.count);
    const uint8_t* const array_end = tokens.element_bytes.data() + tokens.element_bytes.size();
    ForEachString(tokens, tokens.count, [&](uint64_t i, std::string_view s, uint64_t) {
      const std::string_view text = text_of(i, s, renamed);
      const uint8_t* bytes = reinterpret_cast<const uint8_t*>(text.data());
      // Words may be read up to the end of the array's bytes, or of the
      // renamed text.
      const uint8_t* limit = text.data() == renamed.data() ? bytes + text.size() : array_end;
      screen.Add(TextHash(bytes, text.size(), static_cast<uint64_t>(limit - bytes)));
    });
  }
  const HashScreen& screen = parsed_applies ? parsed->screen() : *own;
  if (!screen.MayRepeat()) return;
  // Two hashes may be equal: compare the texts.
  absl::flat_hash_map<std::string, uint64_t> first;
  RuleReporter report(ctx, RuleId::kDuplicateToken);
  ForEachString(tokens, tokens.count, [&](uint64_t i, std::string_view s, uint64_t at) {
    const std::string text(text_of(i, s, renamed));
    const auto [it, inserted] = first.emplace(text, i);
    if (inserted) return;
    const uint64_t first_id = it->second;  // clang 14 cannot capture a structured binding
    report.Add(at, [&] {
      return absl::StrCat("token ", i, " '", EscapeForDisplay(text), "' repeats token ", first_id,
                          ": llama.cpp maps texts to ids and aborts (GGML_ASSERT(id_to_token.size() == "
                          "token_to_id.size())) when two tokens share one");
    });
  });
}


// A string value as llama.cpp's get_key reads it: a C string (cut at its
// first NUL). nullopt when the key is absent or no string (llama.cpp then
// refuses the type: GG4004's business).
std::optional<std::string_view> CStringValue(const KeyValue* kv) {
  if (kv == nullptr || kv->type() != ValueType::kString) return std::nullopt;
  const std::string_view s = kv->value().AsString();
  return s.substr(0, s.find('\0'));
}

// llama_vocab::impl::load throws "cannot find tokenizer vocab in model file"
// without tokenizer.ggml.tokens, and, for a BPE vocabulary, "cannot find
// tokenizer merges in model file" without tokenizer.ggml.merges (except a
// gpt2-family vocabulary whose pre is kimi-k2, which has none; gemma4's
// branch has no such exception). No vocabulary (no_vocab/none) needs
// neither. (A present key of the wrong type is GG4004.)
void CheckTokenizerArrays(RuleContext& ctx, const KeyIndex& keys) {
  const KeyValue* model_kv = keys.Find("tokenizer.ggml.model");
  const std::optional<std::string_view> model = CStringValue(model_kv);
  // Models llama.cpp builds a vocabulary for (vocab_tables.h): an unknown
  // name is GG7006, no_vocab/none need neither array.
  const LlamaTokenizerModel* known = model.has_value() ? FindLlamaTokenizerModel(*model) : nullptr;
  if (known == nullptr || known->vocab_type == "none") return;
  RuleReporter report(ctx, RuleId::kTokenizerArrayMissing);
  const bool kimi_k2 = *model != "gemma4" &&
                       CStringValue(keys.Find("tokenizer.ggml.pre")).value_or("") == "kimi-k2";
  if (known->vocab_type == "bpe" && !kimi_k2 && keys.Find("tokenizer.ggml.merges") == nullptr) {
    report.Add(model_kv->value().offset, [&] {
      return absl::StrCat("a '", EscapeForDisplay(*model), "' (BPE) vocabulary without tokenizer.ggml.merges: ",
                          "llama.cpp's loader throws \"cannot find tokenizer merges in model file\"");
    });
  }
  if (keys.Find(kTokenArrayKey) == nullptr) {
    report.Add(model_kv->value().offset, [&] {
      return absl::StrCat("tokenizer.ggml.model is '", EscapeForDisplay(*model), "' but there is no ",
                          Sv(kTokenArrayKey), ": llama.cpp's loader throws \"cannot find tokenizer vocab in model file\"");
    });
  }
}

// For a t5 (Unigram) vocabulary llama.cpp copies the precompiled charsmap
// and reads its first 4 bytes as the size of the XCDA blob that follows:
// it throws "precompiled_charsmap too small for xcda_blob_size header!" for
// fewer than 4 bytes, and "Index out of array bounds in precompiled
// charsmap!" when size + 4 >= the array's length (the rest must hold the
// normalized strings after the blob). The 4 bytes are read in the host's
// order, little-endian on every machine llama.cpp ships for (bytes are
// never swapped by the GGUF reader).
void CheckCharsmap(RuleContext& ctx, const KeyIndex& keys) {
  if (CStringValue(keys.Find("tokenizer.ggml.model")) != std::optional<std::string_view>("t5")) return;
  const KeyValue* kv = keys.Find("tokenizer.ggml.precompiled_charsmap");
  std::optional<ArrayView> map = ArrayOf(kv, ValueType::kUint8);
  if (!map.has_value()) map = ArrayOf(kv, ValueType::kInt8);
  if (!map.has_value()) return;  // absent, or GG4004
  RuleReporter report(ctx, RuleId::kCharsmapSize);
  const uint64_t n = map->count;
  if (n < 4) {
    report.Add(kv->value().offset, [&] {
      return absl::StrCat("tokenizer.ggml.precompiled_charsmap has ", n, " bytes, fewer than its 4-byte size field: ",
                          "llama.cpp's loader throws");
    });
    return;
  }
  const uint8_t* b = map->element_bytes.data();
  const uint64_t blob = uint64_t{b[0]} | uint64_t{b[1]} << 8 | uint64_t{b[2]} << 16 | uint64_t{b[3]} << 24;
  if (blob + 4 < n) return;
  report.Add(map->elements_offset, [&] {
    return absl::StrCat("tokenizer.ggml.precompiled_charsmap says its blob has ", blob, " bytes, but only ", n - 4,
                        " follow the size field and llama.cpp needs more than that: its loader throws ",
                        "\"Index out of array bounds in precompiled charsmap!\"");
  });
}

}  // namespace

void CheckTokenizer(RuleContext& ctx, const KeyIndex& keys) {
  const KeyValue* tokens_kv = keys.Find(kTokenArrayKey);
  const std::optional<ArrayView> tokens = ArrayOf(tokens_kv, ValueType::kString);
  if (tokens.has_value()) CheckLengths(ctx, keys, tokens->count);
  CheckTokenTypes(ctx, keys, tokens ? &*tokens : nullptr);
  if (std::optional<uint64_t> n_vocab = VocabularySize(keys)) CheckSpecialTokenIds(ctx, keys, *n_vocab);
  if (tokens.has_value() && ctx.policy.check_merges) CheckMerges(ctx, keys, *tokens);
  if (tokens.has_value()) CheckDuplicateTokens(ctx, keys, *tokens_kv, *tokens);
  CheckVocabularyLoad(ctx, keys);
  CheckTokenizerArrays(ctx, keys);
  CheckCharsmap(ctx, keys);
}

}  // namespace ggufguard
