#include "bench/bench_inputs.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "absl/strings/str_cat.h"

namespace ggufguard::bench {
namespace {

using testing::GgufBuilder;
using testing::GgufValue;

// Bump when the generated files change, so stale inputs are rewritten.
constexpr std::string_view kStampName = "bench-inputs.stamp";
constexpr std::string_view kStampText = "ggufguard bench inputs v2\n";

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

// The raw bytes of one "word" a learned token stands for: an optional word
// start (a space, which the byte-level alphabet writes 'Ġ', or now and then a
// newline, 'Ċ'), then mostly lower-case letters, with capitals, digits,
// punctuation and the UTF-8 of accented letters (two bytes, hence two
// non-ASCII symbols). Its tokens are 1 to 16 bytes once written in the
// alphabet.
std::vector<uint8_t> RandomWord(Prng& rng) {
  std::vector<uint8_t> word;
  const uint32_t start = rng.Below(100);
  if (start < 46) {
    word.push_back(' ');
  } else if (start < 49) {
    word.push_back('\n');
  }
  // Letters: triangular over 2..14 (mean 8), one word in 8 longer; tokens
  // are cut at 16 bytes. Tuned so that the header is SmolLM2's ~1.79 MB.
  size_t letters = 2 + rng.Below(7) + rng.Below(7);
  if (rng.Below(8) == 0) letters = 12 + rng.Below(5);
  for (size_t i = 0; i < letters; ++i) {
    const uint32_t kind = rng.Below(100);
    if (kind < 84) {
      word.push_back(static_cast<uint8_t>('a' + rng.Below(26)));
    } else if (kind < 90) {
      word.push_back(static_cast<uint8_t>('A' + rng.Below(26)));
    } else if (kind < 94) {
      word.push_back(static_cast<uint8_t>('0' + rng.Below(10)));
    } else if (kind < 96) {
      static constexpr char kPunct[] = ".,;:!?-_()[]{}'\"/";
      word.push_back(static_cast<uint8_t>(kPunct[rng.Below(sizeof(kPunct) - 1)]));
    } else {
      const uint32_t cp = 0xE0 + rng.Below(0x20);  // à..ÿ, as UTF-8: C3 A0..C3 BF
      word.push_back(static_cast<uint8_t>(0xC0 | (cp >> 6)));
      word.push_back(static_cast<uint8_t>(0x80 | (cp & 0x3F)));
    }
  }
  return word;
}

// Special tokens, then the byte-level alphabet, then learned tokens.
constexpr size_t kFirstLearned = std::size(kSpecialTokens) + 256;

struct Vocabulary {
  std::vector<std::string> tokens;
  std::vector<int32_t> token_types;
  std::vector<std::string> merges;
};

// Builds the vocabulary as byte-level BPE does: every learned token is the
// merge of two earlier tokens, so every merge "left right" is a pair of
// tokens whose concatenation is a token (what llama.cpp and the strict
// policy's merge check expect).
class VocabularyBuilder {
 public:
  explicit VocabularyBuilder(uint64_t seed) : rng_(seed), alphabet_(ByteLevelAlphabet()) {
    for (std::string_view s : kSpecialTokens) Add(std::string(s), 3);  // LLAMA_TOKEN_TYPE_CONTROL
    for (const std::string& s : alphabet_) Add(s, 1);                  // LLAMA_TOKEN_TYPE_NORMAL
  }

  Vocabulary Build(uint32_t vocab_size, uint32_t merge_count) {
    while (v_.tokens.size() < vocab_size) {
      std::vector<uint8_t> word = RandomWord(rng_);
      std::vector<std::string> symbols;
      size_t bytes = 0;
      for (uint8_t b : word) {
        if (bytes + alphabet_[b].size() > 16) break;
        symbols.push_back(alphabet_[b]);
        bytes += symbols.back().size();
      }
      if (symbols.size() >= 2) Learn(symbols, 0, symbols.size());
    }
    // A token comes after its halves and merge i makes learned token i, so
    // cutting both lists at the same token keeps the vocabulary closed.
    v_.tokens.resize(vocab_size);
    v_.token_types.resize(vocab_size);
    v_.merges.resize(vocab_size - kFirstLearned);
    index_.clear();
    for (size_t i = 0; i < v_.tokens.size(); ++i) index_.emplace(v_.tokens[i], i);
    AddAlternativeMerges(merge_count);
    v_.merges.resize(std::min<size_t>(v_.merges.size(), merge_count));
    return std::move(v_);
  }

 private:
  void Add(std::string token, int32_t type) {
    index_.emplace(token, v_.tokens.size());
    v_.tokens.push_back(std::move(token));
    v_.token_types.push_back(type);
  }

  // Adds the token made of symbols [begin, end) after its two halves, split
  // at a random symbol boundary, with the merge that makes it.
  std::string Learn(const std::vector<std::string>& symbols, size_t begin, size_t end) {
    std::string token;
    for (size_t i = begin; i < end; ++i) token += symbols[i];
    if (index_.contains(token)) return token;
    const size_t split = ChooseSplit(symbols, begin, end);
    const std::string left = Learn(symbols, begin, split);
    const std::string right = Learn(symbols, split, end);
    v_.merges.push_back(left + " " + right);
    Add(token, 1);
    return token;
  }

  // Where to split symbols [begin, end): like BPE, which merges tokens it
  // already has, prefer a split whose halves are both tokens, then one with
  // one half a token (tried from a random point); new halves are learned
  // first. Without this preference the vocabulary fills with short halves.
  size_t ChooseSplit(const std::vector<std::string>& symbols, size_t begin, size_t end) {
    const size_t n = end - begin - 1;  // candidate split points
    const size_t first = rng_.Below(static_cast<uint32_t>(n));
    auto known = [&](size_t from, size_t to) {
      std::string t;
      for (size_t i = from; i < to; ++i) t += symbols[i];
      return index_.contains(t);
    };
    size_t one_known = 0;
    for (size_t k = 0; k < n; ++k) {
      const size_t split = begin + 1 + (first + k) % n;
      const bool left = known(begin, split), right = known(split, end);
      if (left && right) return split;
      if ((left || right) && one_known == 0) one_known = split;
    }
    return one_known != 0 ? one_known : begin + 1 + first;
  }

  // Byte-level BPE learns one merge per token; SmolLM2 lists a few more merges
  // (48,900) than it has learned tokens (48,879). The extra ones split a
  // token elsewhere, into two other tokens.
  void AddAlternativeMerges(uint32_t merge_count) {
    std::unordered_set<std::string> seen(v_.merges.begin(), v_.merges.end());
    for (size_t t = kFirstLearned; t < v_.tokens.size(); ++t) {
      if (v_.merges.size() >= merge_count) return;
      const std::string& token = v_.tokens[t];
      for (size_t at = 1; at < token.size(); ++at) {
        if ((static_cast<uint8_t>(token[at]) & 0xC0) == 0x80) continue;  // inside a symbol
        std::string left = token.substr(0, at), right = token.substr(at);
        std::string merge = left + " " + right;
        if (index_.contains(left) && index_.contains(right) && seen.insert(merge).second) {
          v_.merges.push_back(std::move(merge));
          break;
        }
      }
    }
  }

  Prng rng_;
  std::vector<std::string> alphabet_;
  std::unordered_map<std::string, size_t> index_;
  Vocabulary v_;
};

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
  Vocabulary v = VocabularyBuilder(/*seed=*/0x5300'4C4D'3200'0000ull).Build(vocab_size, kSmolLm2MergeCount * vocab_scale);

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
