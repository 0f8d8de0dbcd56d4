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
#include "ggufguard/base/page_buffer.h"
#include "ggufguard/base/sv.h"
#include "ggufguard/base/text.h"
#include "ggufguard/rules/rules.h"

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

// Calls f(index, string, file offset of its bytes) for strings [0, end). The
// parser proved every length, so the walk cannot fail.
template <typename F>
void ForEachString(const ArrayView& a, uint64_t end, F&& f) {
  ByteReader r(a.element_bytes, a.order);
  for (uint64_t i = 0; i < end && i < a.count; ++i) {
    uint64_t len = 0;
    if (a.length_size == 8) {
      if (!r.ReadU64(&len)) return;
    } else {
      uint32_t len32;
      if (!r.ReadU32(&len32)) return;
      len = len32;
    }
    const uint64_t at = a.elements_offset + r.position();
    absl::Span<const uint8_t> s;
    if (!r.ReadBytes(len, &s)) return;
    f(i, AsStringView(s), at);
  }
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

// A quick 64-bit hash of a token's bytes s, 8 bytes a step (tokens are a
// few bytes long), or nullopt when s holds a NUL (the caller then cuts it
// as C code does). Each step loads a whole word, the last one masked to the
// token's length: a byte loop or a variable-length memcpy (which stalls the
// load after it) cost 20 ns a token, most of validating a vocabulary. The
// word may run past s, never past `limit` (the end of the array's bytes,
// which the parser proved readable); near it, the tail is read bytewise.
// Not keyed: a crafted vocabulary can make it collide, which only sends
// CheckDuplicateTokens to its exact second pass.
constexpr uint64_t kTokenSeed = 0x9E3779B97F4A7C15ull;
inline bool HasZeroByte(uint64_t w) {
  constexpr uint64_t kOnes = 0x0101010101010101ull, kHighs = 0x8080808080808080ull;
  return ((w - kOnes) & ~w & kHighs) != 0;
}
inline uint64_t TokenStep(uint64_t h, uint64_t w) {
  h = (h ^ w) * 0xFF51AFD7ED558CCDull;
  return h ^ (h >> 32);
}
inline uint64_t TokenFinal(uint64_t h, uint64_t w) {
  h = (h ^ w) * 0xC4CEB9FE1A85EC53ull;
  return h ^ (h >> 29);
}
// The first n bytes of a little-endian word, n in 0..8.
inline uint64_t FirstBytes(size_t n) { return n >= 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * n)) - 1; }

// False (and no hash) when s holds a NUL. Not std::optional: GCC built the
// optional in memory, a byte then a word, and read it back as two words,
// a store-forwarding stall that was a fifth of this function's samples.
inline bool TokenHash(std::string_view s, const char* limit, uint64_t* hash) {
  const size_t n = s.size();
  // Most tokens: under 16 bytes, with 16 readable bytes from their start.
  // Two loads and selects, no loop: the loop below runs 0, 1 or 2 times
  // from token to token, and its mispredicted exits were most of this
  // function's time. Same function as the loop (a full step for the first
  // word when n >= 8, then the final step with the masked rest).
  if (n < 16 && limit - s.data() >= 16) {
    uint64_t w0, w1;
    std::memcpy(&w0, s.data(), 8);
    std::memcpy(&w1, s.data() + 8, 8);
    const bool full = n >= 8;
    const uint64_t keep0 = FirstBytes(full ? 8 : n), keep1 = FirstBytes(full ? n - 8 : 0);
    w0 &= keep0;
    w1 &= keep1;
    if (HasZeroByte(w0 | ~keep0) || HasZeroByte(w1 | ~keep1)) return false;
    const uint64_t h0 = kTokenSeed ^ n;
    *hash = TokenFinal(full ? TokenStep(h0, w0) : h0, full ? w1 : w0);
    return true;
  }
  uint64_t h = kTokenSeed ^ n;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    if (HasZeroByte(w)) return false;
    h = TokenStep(h, w);
  }
  const size_t rest = n - i;  // 0..7
  uint64_t w = 0;
  if (rest > 0) {
    if (limit - (s.data() + i) >= 8) {
      std::memcpy(&w, s.data() + i, 8);
    } else {
      for (size_t k = 0; k < rest; ++k) w |= uint64_t{static_cast<uint8_t>(s[i + k])} << (8 * k);
    }
    const uint64_t keep = FirstBytes(rest);
    w &= keep;
    if (HasZeroByte(w | ~keep)) return false;
  }
  *hash = TokenFinal(h, w);
  return true;
}

// Records 64-bit hashes and says whether two may be equal: an
// open-addressing table of at least four times as many slots as hashes,
// probed linearly. Each slot keeps 32 bits of the hash (its low half, with
// the lowest bit set: 0 marks an empty slot); the top bits chose the slot,
// so two hashes are taken as equal only when they share a probe run and 31
// bits. For the SmolLM2-like vocabulary (49,152 tokens) that is a 1 MiB
// table. At twice as many slots (512 KiB) a third of the inserts found
// their slot taken (the probes were most of this function's samples in
// perf annotate); at a load of 1/4 or less the tokenizer rules take 422-434 us
// instead of 518-542 on that header (rules/tokenizer in bench/validate_bench,
// medians of 5, both builds alternating three times),
// and a fresh process still clears one 2 MiB huge page for the table
// (base/page_buffer.h). It
// replaced an absl::flat_hash_set of the hashes, with which full validation
// of that header took 2.0 ms instead of 1.57 ms (docs/performance.md,
// "Since then"). A probe longer than kMaxProbe answers "maybe", so hashes
// crafted to share a slot cost a bounded walk each and send the caller to
// its exact pass; so does a false match of the 31 bits.
class HashClashes {
 public:
  // The table is fresh zeroed pages (base/page_buffer.h): as a std::vector
  // its 128 pages for 49,152 tokens were 128 page faults plus a memset,
  // ~1.4 ms of a validation process on the VM of docs/performance.md. A
  // thread keeps its last table (up to kKeepBytes) for the next validation,
  // so that `scan` and a library validating file after file fault it in
  // once and then only clear it.
  explicit HashClashes(uint64_t count) {
    while ((size_t{1} << bits_) < 4 * count) ++bits_;
    const size_t bytes = (size_t{1} << bits_) * sizeof(uint32_t);
    if (spare_.size() >= bytes) {
      table_buffer_ = std::move(spare_);
      std::memset(table_buffer_.data(), 0, bytes);
    } else {
      table_buffer_ = PageBuffer::Zeroed(bytes);
    }
    table_ = reinterpret_cast<uint32_t*>(table_buffer_.data());
    mask_ = (size_t{1} << bits_) - 1;
  }
  ~HashClashes() {
    if (table_buffer_.size() <= kKeepBytes && table_buffer_.size() > spare_.size()) spare_ = std::move(table_buffer_);
  }
  HashClashes(const HashClashes&) = delete;
  HashClashes& operator=(const HashClashes&) = delete;
  // The probes are random reads of a table larger than L1 and L2: callers
  // prefetch a batch of slots, then add the batch.
  void Prefetch(uint64_t h) const { __builtin_prefetch(&table_[Home(h)]); }
  // False when `h` may equal a hash added before.
  bool Add(uint64_t h) {
    constexpr size_t kMaxProbe = 64;
    const uint32_t kept = static_cast<uint32_t>(h) | 1;
    size_t slot = Home(h);
    for (size_t probe = 0;; ++probe, slot = (slot + 1) & mask_) {
      if (table_[slot] == 0) {
        table_[slot] = kept;
        return true;
      }
      if (table_[slot] == kept || probe == kMaxProbe) return false;
    }
  }

 private:
  size_t Home(uint64_t h) const { return static_cast<size_t>(h >> (64 - bits_)); }

  // 4 MiB: the table of a 256K-token vocabulary (Gemma's), 5x SmolLM2's.
  static constexpr size_t kKeepBytes = size_t{4} << 20;
  static thread_local PageBuffer spare_;

  int bits_ = 4;
  PageBuffer table_buffer_;
  uint32_t* table_ = nullptr;
  size_t mask_ = 0;
};
thread_local PageBuffer HashClashes::spare_;

// llama.cpp's vocabulary loader maps every token's text to its id and
// asserts that no two tokens share a text (GGML_ASSERT(id_to_token.size() ==
// token_to_id.size())): a repeated token aborts the load. The text is what
// gguf_get_arr_str gives, a C string (cut at its first NUL), and an empty
// one becomes "[EMPTY_<id>]". A first pass keeps only 64-bit hashes, the
// common case; the texts are compared only when two hashes meet.
// (GG9054, found by the loader oracle: fuzz/oracle.)
void CheckDuplicateTokens(RuleContext& ctx, const KeyIndex& keys, const ArrayView& tokens) {
  const KeyValue* model = keys.Find("tokenizer.ggml.model");
  if (model == nullptr || model->type() != ValueType::kString) return;  // llama.cpp refuses the file
  const std::string_view name = model->value().AsString();
  if (name == "no_vocab" || name == "none" || !ctx.sink.Enabled(RuleId::kDuplicateToken)) return;
  auto text_of = [](uint64_t i, std::string_view s, std::string& renamed) -> std::string_view {
    s = s.substr(0, s.find('\0'));
    if (!s.empty()) return s;
    renamed = absl::StrCat("[EMPTY_", i, "]");
    return renamed;
  };
  // The parser proved the array's strings are there, so its count sizes
  // the table (16-32 bytes per token of at least 8 bytes of file: at most
  // 64 MiB at the 4M-token limit of the default policy); past the
  // policy's vocabulary limit GG9003 rejects the file and this does not run.
  if (tokens.count > ctx.policy.limits.max_vocab_size) return;
  HashClashes seen(tokens.count);
  bool clash = false;
  std::string renamed;
  const char* limit = reinterpret_cast<const char*>(tokens.element_bytes.data() + tokens.element_bytes.size());
  // Hashes wait in a batch whose slots are prefetched, so that the table's
  // cache misses overlap instead of following each other.
  constexpr size_t kBatch = 16;
  std::array<uint64_t, kBatch> batch;
  size_t batched = 0;
  auto add_batch = [&] {
    for (size_t k = 0; k < batched && !clash; ++k) clash = !seen.Add(batch[k]);
    batched = 0;
  };
  ForEachString(tokens, tokens.count, [&](uint64_t i, std::string_view s, uint64_t) {
    if (clash) return;
    uint64_t h = 0;
    if (s.empty() || !TokenHash(s, limit, &h)) {  // empty, or cut at a NUL: the text llama.cpp sees
      const std::string_view text = text_of(i, s, renamed);
      (void)TokenHash(text, text.data() + text.size(), &h);  // no NUL left in it
    }
    seen.Prefetch(h);
    batch[batched++] = h;
    if (batched == kBatch) add_batch();
  });
  add_batch();
  if (!clash) return;
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

}  // namespace

void CheckTokenizer(RuleContext& ctx, const KeyIndex& keys) {
  const std::optional<ArrayView> tokens = ArrayOf(keys.Find("tokenizer.ggml.tokens"), ValueType::kString);
  if (tokens.has_value()) CheckLengths(ctx, keys, tokens->count);
  CheckTokenTypes(ctx, keys, tokens ? &*tokens : nullptr);
  if (std::optional<uint64_t> n_vocab = VocabularySize(keys)) CheckSpecialTokenIds(ctx, keys, *n_vocab);
  if (tokens.has_value() && ctx.policy.check_merges) CheckMerges(ctx, keys, *tokens);
  if (tokens.has_value()) CheckDuplicateTokens(ctx, keys, *tokens);
}

}  // namespace ggufguard
