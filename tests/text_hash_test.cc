// base/text_hash.h and base/hash_screen.h: the duplicate-token rule's
// (GG9054) hash and its screen for repeats.
#include "ggufguard/base/text_hash.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "bench/bench_inputs.h"
#include "ggufguard/base/hash_screen.h"
#include "ggufguard/parse/parser.h"
#include "ggufguard/rules/known_keys.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace ggufguard {
namespace {

// TextHash reads whole words when 16 bytes are readable from the text, and
// copies the bytes otherwise (near the end of a buffer); texts longer than
// 16 bytes take the block loop, whose last block is read either way. Every
// path must give the same hash for the same bytes, whatever they hold.
TEST(TextHashTest, TheSameBytesHashAlikeOnEveryPath) {
  std::mt19937 rng(7);
  for (size_t n = 0; n <= 70; ++n) {
    for (int trial = 0; trial < 20; ++trial) {
      std::vector<uint8_t> text(n);
      for (uint8_t& b : text) b = static_cast<uint8_t>(rng() % 4 == 0 ? 0 : rng());  // NULs too
      // Lots of readable bytes after the text (garbage that must not count).
      std::vector<uint8_t> roomy(text);
      for (int k = 0; k < 40; ++k) roomy.push_back(static_cast<uint8_t>(rng()));
      // Exactly the text: the copying paths.
      std::vector<uint8_t> tight(text);
      const uint64_t a = TextHash(roomy.data(), n, roomy.size());
      const uint64_t b = TextHash(tight.data(), n, tight.size());
      EXPECT_EQ(a, b) << "length " << n;
      for (uint64_t room = n; room < roomy.size(); ++room) {
        ASSERT_EQ(TextHash(roomy.data(), n, room), a) << "length " << n << " room " << room;
      }
    }
  }
}

// Texts that differ in one byte, or only in length (a trailing NUL, or a
// text and its prefix), hash apart.
TEST(TextHashTest, NeighbouringTextsHashApart) {
  std::set<uint64_t> seen;
  size_t texts = 0;
  for (size_t n = 0; n <= 40; ++n) {
    std::vector<uint8_t> base(n + 64, 'a');
    ++texts;
    seen.insert(TextHash(base.data(), n, base.size()));
    for (size_t at = 0; at < n; ++at) {
      for (uint8_t b : {uint8_t{0}, uint8_t{'b'}, uint8_t{0x80}, uint8_t{0xff}}) {
        std::vector<uint8_t> t = base;
        t[at] = b;
        ++texts;
        seen.insert(TextHash(t.data(), n, t.size()));
      }
    }
  }
  EXPECT_EQ(seen.size(), texts);
}

// The screen answers "may repeat" for every list with a repeat, wherever the
// two copies are, and "no" for distinct random hashes.
TEST(HashScreenTest, FindsEveryRepeatAndNoneWithout) {
  std::mt19937_64 rng(11);
  for (size_t n : {2u, 3u, 100u, 1000u, 49152u}) {
    std::vector<uint64_t> hashes(n);
    for (uint64_t& h : hashes) h = rng();
    EXPECT_FALSE(HashesMayRepeat(hashes)) << n;
    for (int trial = 0; trial < 5; ++trial) {
      std::vector<uint64_t> with = hashes;
      const size_t i = rng() % n, j = rng() % n;
      if (i == j) continue;
      with[j] = with[i];
      EXPECT_TRUE(HashesMayRepeat(with)) << n << " " << i << " " << j;
    }
  }
  EXPECT_FALSE(HashesMayRepeat({}));
  EXPECT_FALSE(HashesMayRepeat(std::vector<uint64_t>{42}));
}

// Hashes equal in their top 40 bits are taken as equal (the screen keeps no
// more); one bit of difference there is seen.
TEST(HashScreenTest, ComparesTheTopFortyBits) {
  std::mt19937_64 rng(12);
  std::vector<uint64_t> hashes(5000);
  for (uint64_t& h : hashes) h = rng();
  std::vector<uint64_t> low_bits_differ = hashes;
  low_bits_differ[4000] = (hashes[17] & ~uint64_t{0xFFFFFF}) | (~hashes[17] & 0xFFFFFF);
  EXPECT_TRUE(HashesMayRepeat(low_bits_differ));
  std::vector<uint64_t> bit_24_differs = hashes;
  bit_24_differs[4000] = hashes[17] ^ (uint64_t{1} << 24);
  EXPECT_FALSE(HashesMayRepeat(bit_24_differs));
}

// Crafted hashes: all in one partition (they overflow its fixed capacity),
// or crowding one slot. The answer is "may repeat" whenever there is a
// repeat, and conservatively when the hashes are crowded, after bounded
// work (a test that took quadratic time would time out here).
TEST(HashScreenTest, CraftedHashesCostBoundedWorkAndMissNoRepeat) {
  std::mt19937_64 rng(13);
  const size_t n = 200000;
  std::vector<uint64_t> one_partition(n);
  for (uint64_t& h : one_partition) h = (rng() >> 8) | (uint64_t{0xAB} << 56);
  std::sort(one_partition.begin(), one_partition.end());
  one_partition.erase(std::unique(one_partition.begin(), one_partition.end()), one_partition.end());
  std::shuffle(one_partition.begin(), one_partition.end(), rng);
  EXPECT_TRUE(HashesMayRepeat(one_partition));  // crowded
  one_partition.push_back(one_partition[12345]);
  EXPECT_TRUE(HashesMayRepeat(one_partition));

  std::vector<uint64_t> one_slot(n);
  for (size_t i = 0; i < n; ++i) one_slot[i] = (uint64_t{0x5A} << 56) | i;  // same partition, same home slot
  EXPECT_TRUE(HashesMayRepeat(one_slot));  // a probe past the bound: "may repeat"

  // Partitions past their capacity: "may repeat", the caller's exact pass
  // decides.
  std::vector<uint64_t> two_partitions(5000);
  for (size_t i = 0; i < two_partitions.size(); ++i) {
    two_partitions[i] = (uint64_t{i % 2} << 63) | (rng() >> 8);
  }
  EXPECT_TRUE(HashesMayRepeat(two_partitions));
}

// Every token's bytes, hashed as the duplicate-token rule does, and the
// texts.
std::vector<uint64_t> HashTokens(const ArrayView& tokens, std::set<std::string>* texts) {
  std::vector<uint64_t> out;
  ByteReader r(tokens.element_bytes, tokens.order);
  for (uint64_t i = 0; i < tokens.count; ++i) {
    uint64_t len = 0;
    if (tokens.length_size == 8) {
      EXPECT_TRUE(r.ReadU64(&len));
    } else {
      uint32_t l32 = 0;
      EXPECT_TRUE(r.ReadU32(&l32));
      len = l32;
    }
    const uint8_t* text = tokens.element_bytes.data() + r.position();
    out.push_back(TextHash(text, len, tokens.element_bytes.size() - r.position()));
    texts->insert(std::string(reinterpret_cast<const char*>(text), len));
    EXPECT_TRUE(r.Skip(len));
  }
  return out;
}

// The hash is not a weak one on real data: on every vocabulary of the real
// corpus and on the benchmark's, no two tokens share their top 40 bits, so
// the screen never sends a real file to the slow exact comparison. (Two
// multiplies XORed, an earlier form, collided 5-20 times on each.)
TEST(TextHashTest, NoRealVocabularyLooksRepeated) {
  std::vector<std::pair<std::string, std::vector<uint8_t>>> files;
  GGUFGUARD_SKIP_WITHOUT_REAL_CORPUS();
  const std::filesystem::path real = testing::RealCorpusDir();
  for (const auto& entry : std::filesystem::recursive_directory_iterator(real)) {
    if (entry.path().extension() != ".gguf") continue;
    if (auto bytes = testing::ReadFileBytes(entry.path())) files.emplace_back(entry.path().string(), *bytes);
  }
  files.emplace_back("smollm2-like", bench::SmolLm2LikeBuilder(1).Build().bytes);
  size_t vocabularies = 0;
  const Policy policy = DefaultPolicy();  // outlives the sinks, which keep a reference
  for (const auto& [name, bytes] : files) {
    FindingSink sink(policy);
    ParseResult parsed = ParseHeader(bytes, ParseOptions{policy.limits, true}, sink);
    if (parsed.status != ParseStatus::kOk) continue;
    const KeyValue* kv = parsed.header.Find("tokenizer.ggml.tokens");
    if (kv == nullptr || kv->type() != ValueType::kArray || kv->value().array.element_type != ValueType::kString) continue;
    const ArrayView tokens = kv->value().array;
    std::set<std::string> distinct_texts;
    const std::vector<uint64_t> hashes = HashTokens(tokens, &distinct_texts);
    if (distinct_texts.size() != tokens.count) continue;  // a real repeat: not this test's business
    ++vocabularies;
    EXPECT_FALSE(HashesMayRepeat(hashes)) << name << ": " << tokens.count << " tokens";
  }
  EXPECT_GE(vocabularies, 10u);
}

}  // namespace
}  // namespace ggufguard
