#include "bench/bench_inputs.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string_view>
#include <unordered_set>
#include <utility>

#include "absl/strings/str_cat.h"

namespace ggufguard::bench {
namespace {

using testing::GgufBuilder;
using testing::GgufValue;

// Bump when the generated files change, so stale inputs are rewritten.
constexpr std::string_view kStampName = "bench-inputs.stamp";
constexpr std::string_view kStampText = "ggufguard bench inputs v1\n";

constexpr uint32_t kGgmlF32 = 0;
constexpr uint32_t kGgmlQ8_0 = 8;

// SmolLM2-135M.
constexpr uint64_t kEmbedding = 576;
constexpr uint64_t kFeedForward = 1536;
constexpr uint64_t kHeads = 9;
constexpr uint64_t kKvHeads = 3;
constexpr uint64_t kHeadDim = kEmbedding / kHeads;  // 64
constexpr uint32_t kBlocks = 30;

// SmolLM2's special tokens (ids 0..16), every one a control token.
constexpr std::string_view kSpecialTokens[] = {
    "<|endoftext|>",   "<|im_start|>",    "<|im_end|>",     "<repo_name>",   "<reponame>",    "<file_sep>",
    "<filename>",      "<gh_stars>",      "<issue_start>",  "<issue_comment>", "<issue_closed>", "<jupyter_start>",
    "<jupyter_text>",  "<jupyter_code>",  "<jupyter_output>", "<jupyter_script>", "<empty_output>",
};

// SmolLM2-Instruct's chat template (ChatML).
constexpr std::string_view kChatTemplate =
    "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}"
    "{{ '<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n' }}"
    "{% endif %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}";

// splitmix64: a fixed seed gives the same files on every machine.
class Prng {
 public:
  explicit Prng(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  uint32_t Below(uint32_t n) { return static_cast<uint32_t>(Next() % n); }

 private:
  uint64_t state_;
};

void AppendUtf8(std::string& s, uint32_t cp) {
  if (cp < 0x80) {
    s.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    s.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    s.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    s.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    s.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    s.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

// GPT-2's byte-level alphabet: printable bytes stand for themselves, the
// others (space, controls, 0x7F..0xA0, 0xAD) for U+0100 onwards, so the space
// is 'Ġ' (U+0120) and the newline 'Ċ' (U+010A).
std::vector<std::string> ByteLevelAlphabet() {
  std::vector<std::string> out;
  uint32_t shifted = 0;
  for (uint32_t b = 0; b < 256; ++b) {
    bool printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174);
    std::string s;
    AppendUtf8(s, printable ? b : 256 + shifted++);
    out.push_back(std::move(s));
  }
  return out;
}

// One "learned" token: optional word-start marker, then letters, with now
// and then an accented letter, a CJK character, a digit or punctuation.
// 2 to 16 bytes and at least two code points (so a merge can produce it).
std::string RandomToken(Prng& rng) {
  // Byte length: triangular over 2..12 (mean 7), one in 16 longer, up to 16.
  size_t target = 2 + rng.Below(6) + rng.Below(6);
  if (rng.Below(16) == 0) target = 12 + rng.Below(5);
  std::string s;
  size_t code_points = 0;
  uint32_t start = rng.Below(100);
  if (start < 46) {
    AppendUtf8(s, 0x120);  // 'Ġ': the token starts a word
    ++code_points;
  } else if (start < 49) {
    AppendUtf8(s, 0x10A);  // 'Ċ': a newline
    ++code_points;
  }
  while (s.size() < target || code_points < 2) {
    uint32_t kind = rng.Below(100);
    std::string c;
    if (kind < 84) {
      AppendUtf8(c, 'a' + rng.Below(26));
    } else if (kind < 90) {
      AppendUtf8(c, 'A' + rng.Below(26));
    } else if (kind < 93) {
      AppendUtf8(c, '0' + rng.Below(10));
    } else if (kind < 95) {
      static constexpr char kPunct[] = ".,;:!?-_()[]{}'\"/";
      AppendUtf8(c, static_cast<uint8_t>(kPunct[rng.Below(sizeof(kPunct) - 1)]));
    } else if (kind < 98) {
      AppendUtf8(c, 0xE0 + rng.Below(0x20));  // Latin-1 letters: à..ÿ
    } else {
      AppendUtf8(c, 0x4E00 + rng.Below(0x5000));  // CJK ideographs: 3 bytes
    }
    if (s.size() + c.size() > 16) {
      if (code_points >= 2) break;
      continue;  // too long: draw again (an ASCII letter always fits)
    }
    s += c;
    ++code_points;
  }
  return s;
}

// Byte offsets where a code point starts, past the first: where a merge may
// split `token` into its two halves.
std::vector<size_t> SplitPoints(std::string_view token) {
  std::vector<size_t> out;
  for (size_t i = 1; i < token.size(); ++i) {
    if ((static_cast<uint8_t>(token[i]) & 0xC0) != 0x80) out.push_back(i);
  }
  return out;
}

struct Vocabulary {
  std::vector<std::string> tokens;
  std::vector<int32_t> token_types;
  std::vector<std::string> merges;
};

Vocabulary MakeVocabulary(uint32_t vocab_size, uint32_t merge_count, uint64_t seed) {
  Prng rng(seed);
  Vocabulary v;
  v.tokens.reserve(vocab_size);
  std::unordered_set<std::string> seen;
  seen.reserve(vocab_size);
  for (std::string_view s : kSpecialTokens) {
    v.tokens.emplace_back(s);
    v.token_types.push_back(3);  // LLAMA_TOKEN_TYPE_CONTROL
  }
  for (std::string& s : ByteLevelAlphabet()) {
    v.tokens.push_back(std::move(s));
    v.token_types.push_back(1);  // LLAMA_TOKEN_TYPE_NORMAL
  }
  for (const std::string& s : v.tokens) seen.insert(s);
  const size_t first_learned = v.tokens.size();
  while (v.tokens.size() < vocab_size) {
    std::string s = RandomToken(rng);
    if (!seen.insert(s).second) continue;  // tokens are unique, as in a real vocabulary
    v.tokens.push_back(std::move(s));
    v.token_types.push_back(1);
  }

  // Each learned token comes from one merge "left right" of its two halves;
  // past the last learned token, merges split tokens again elsewhere.
  std::unordered_set<std::string> merges_seen;
  merges_seen.reserve(merge_count);
  v.merges.reserve(merge_count);
  const size_t learned = v.tokens.size() - first_learned;
  for (size_t i = 0; v.merges.size() < merge_count; ++i) {
    const std::string& t = v.tokens[first_learned + i % learned];
    std::vector<size_t> splits = SplitPoints(t);
    size_t first = rng.Below(static_cast<uint32_t>(splits.size()));
    for (size_t k = 0; k < splits.size(); ++k) {
      size_t at = splits[(first + k) % splits.size()];
      std::string m = t.substr(0, at) + " " + t.substr(at);
      if (merges_seen.insert(m).second) {
        v.merges.push_back(std::move(m));
        break;
      }
    }
  }
  return v;
}

void AddTensors(GgufBuilder& b, uint64_t vocab_size) {
  b.AddTensor("token_embd.weight", {kEmbedding, vocab_size}, kGgmlQ8_0);
  for (uint32_t i = 0; i < kBlocks; ++i) {
    const std::string blk = absl::StrCat("blk.", i, ".");
    // llama.cpp's converter writes each block's tensors in name order.
    b.AddTensor(blk + "attn_k.weight", {kEmbedding, kKvHeads * kHeadDim}, kGgmlQ8_0);
    b.AddTensor(blk + "attn_norm.weight", {kEmbedding}, kGgmlF32);
    b.AddTensor(blk + "attn_output.weight", {kEmbedding, kEmbedding}, kGgmlQ8_0);
    b.AddTensor(blk + "attn_q.weight", {kEmbedding, kEmbedding}, kGgmlQ8_0);
    b.AddTensor(blk + "attn_v.weight", {kEmbedding, kKvHeads * kHeadDim}, kGgmlQ8_0);
    b.AddTensor(blk + "ffn_down.weight", {kFeedForward, kEmbedding}, kGgmlQ8_0);
    b.AddTensor(blk + "ffn_gate.weight", {kEmbedding, kFeedForward}, kGgmlQ8_0);
    b.AddTensor(blk + "ffn_norm.weight", {kEmbedding}, kGgmlF32);
    b.AddTensor(blk + "ffn_up.weight", {kEmbedding, kFeedForward}, kGgmlQ8_0);
  }
  b.AddTensor("output_norm.weight", {kEmbedding}, kGgmlF32);  // embeddings are tied: no output.weight
}

}  // namespace

GgufBuilder SmolLm2LikeBuilder(uint32_t vocab_scale) {
  if (vocab_scale == 0) vocab_scale = 1;
  const uint32_t vocab_size = kSmolLm2VocabSize * vocab_scale;
  Vocabulary v = MakeVocabulary(vocab_size, kSmolLm2MergeCount * vocab_scale, /*seed=*/0x5300'4C4D'3200'0000ull);

  GgufBuilder b;
  b.set_default_fill(testing::DataFill::kZeros);
  b.AddKv("general.architecture", GgufValue::Str("llama"));
  b.AddKv("general.type", GgufValue::Str("model"));
  b.AddKv("general.name", GgufValue::Str("SmolLM2 135M Instruct"));
  b.AddKv("general.finetune", GgufValue::Str("Instruct"));
  b.AddKv("general.basename", GgufValue::Str("SmolLM2"));
  b.AddKv("general.size_label", GgufValue::Str("135M"));
  b.AddKv("general.license", GgufValue::Str("apache-2.0"));
  b.AddKv("llama.block_count", GgufValue::U32(kBlocks));
  b.AddKv("llama.context_length", GgufValue::U32(8192));
  b.AddKv("llama.embedding_length", GgufValue::U32(kEmbedding));
  b.AddKv("llama.feed_forward_length", GgufValue::U32(kFeedForward));
  b.AddKv("llama.attention.head_count", GgufValue::U32(kHeads));
  b.AddKv("llama.attention.head_count_kv", GgufValue::U32(kKvHeads));
  b.AddKv("llama.rope.freq_base", GgufValue::F32(100000.0f));
  b.AddKv("llama.attention.layer_norm_rms_epsilon", GgufValue::F32(1e-5f));
  b.AddKv("general.file_type", GgufValue::U32(7));  // LLAMA_FTYPE_MOSTLY_Q8_0
  b.AddKv("llama.vocab_size", GgufValue::U32(vocab_size));
  b.AddKv("llama.rope.dimension_count", GgufValue::U32(kHeadDim));
  b.AddAlignmentKv(32);
  b.AddKv("tokenizer.ggml.model", GgufValue::Str("gpt2"));
  b.AddKv("tokenizer.ggml.pre", GgufValue::Str("smollm"));
  b.AddKv("tokenizer.ggml.tokens", GgufValue::StrArray(std::move(v.tokens)));
  b.AddKv("tokenizer.ggml.token_type", GgufValue::I32Array(std::move(v.token_types)));
  b.AddKv("tokenizer.ggml.merges", GgufValue::StrArray(std::move(v.merges)));
  b.AddKv("tokenizer.ggml.bos_token_id", GgufValue::U32(1));
  b.AddKv("tokenizer.ggml.eos_token_id", GgufValue::U32(2));
  b.AddKv("tokenizer.ggml.unknown_token_id", GgufValue::U32(0));
  b.AddKv("tokenizer.ggml.padding_token_id", GgufValue::U32(2));
  b.AddKv("tokenizer.ggml.add_bos_token", GgufValue::Bool(false));
  b.AddKv("tokenizer.chat_template", GgufValue::Str(kChatTemplate));
  b.AddKv("general.quantization_version", GgufValue::U32(2));
  AddTensors(b, vocab_size);
  return b;
}

absl::Status WriteBenchInputs(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return absl::InternalError(absl::StrCat("cannot create ", dir, ": ", ec.message()));
  std::filesystem::remove(std::filesystem::path(dir) / kStampName, ec);
  for (const BenchInputFile& f : kBenchInputFiles) {
    const std::string path = (std::filesystem::path(dir) / f.file_name).string();
    // Written under a temporary name, then renamed: a benchmark running
    // at the same time never sees half a file.
    const std::string tmp = path + ".tmp";
    absl::Status s = SmolLm2LikeBuilder(f.vocab_scale).WriteToFile(tmp, /*sparse_data=*/true);
    if (!s.ok()) return s;
    std::filesystem::rename(tmp, path, ec);
    if (ec) return absl::InternalError(absl::StrCat("cannot rename ", tmp, ": ", ec.message()));
  }
  std::ofstream stamp(std::filesystem::path(dir) / kStampName, std::ios::trunc);
  stamp << kStampText;
  if (!stamp.flush()) return absl::InternalError(absl::StrCat("cannot write the stamp in ", dir));
  return absl::OkStatus();
}

bool BenchInputsPresent(const std::string& dir) {
  std::ifstream stamp(std::filesystem::path(dir) / kStampName);
  std::stringstream text;
  text << stamp.rdbuf();
  if (!stamp || text.str() != kStampText) return false;
  for (const BenchInputFile& f : kBenchInputFiles) {
    if (!std::filesystem::is_regular_file(std::filesystem::path(dir) / f.file_name)) return false;
  }
  return true;
}

std::string BenchInputDir(const std::string& fallback) {
  const char* env = std::getenv("GGUFGUARD_BENCH_INPUTS");
  return env != nullptr && *env != '\0' ? std::string(env) : fallback;
}

}  // namespace ggufguard::bench
