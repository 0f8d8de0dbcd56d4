// The key index (rules/key_groups.h) against a brute-force reference, with
// the real hash and with degenerate ones that make every key collide: the
// paths a hash-flooding file would reach (many distinct keys under one hash,
// several canonical keys in one run) give the same answers.
#include "ggufguard/rules/key_groups.h"

#include <algorithm>
#include <string>
#include <vector>

#include "bench/hostile_inputs.h"
#include "ggufguard/parse/parser.h"
#include "ggufguard/rules/rules.h"
#include "gtest/gtest.h"
#include "tests/support/gguf_writer.h"

namespace ggufguard {
namespace {

using testing::GgufBuilder;
using testing::GgufValue;

uint64_t ConstantHash(std::string_view) { return 42; }
uint64_t LengthHash(std::string_view s) { return s.size() << 40; }  // equal top bits for equal lengths

struct Parsed {
  std::vector<uint8_t> bytes;
  GgufHeader header;
};

Parsed Parse(const GgufBuilder& b) {
  Parsed p{b.Build().bytes, {}};
  Policy policy = DefaultPolicy();
  FindingSink sink(policy);
  ParseResult r = ParseHeader(p.bytes, ParseOptions{policy.limits, true}, sink);
  EXPECT_EQ(r.status, ParseStatus::kOk);
  p.header = std::move(r.header);
  return p;
}

// O(n^2): the first KV with equal bytes, and with an equal CanonicalKey.
void ExpectMatchesBruteForce(const GgufHeader& h, KeyGroups::KeyHash hash) {
  const KeyGroups g(h, hash);
  const size_t n = h.kvs.size();
  ASSERT_EQ(g.size(), n);
  for (size_t i = 0; i < n; ++i) {
    size_t exact = i, canonical = i;
    for (size_t j = i; j-- > 0;) {
      if (h.kvs[j].key() == h.kvs[i].key()) exact = j;
      if (CanonicalKey(h.kvs[j].key()) == CanonicalKey(h.kvs[i].key())) canonical = j;
    }
    ASSERT_EQ(g.FirstExact(i), exact) << i;
    ASSERT_EQ(g.FirstCanonical(i), canonical) << i;
    if (canonical == i) {
      std::vector<uint32_t> members;
      for (size_t j = i; j < n; ++j) {
        if (CanonicalKey(h.kvs[j].key()) == CanonicalKey(h.kvs[i].key())) members.push_back(static_cast<uint32_t>(j));
      }
      EXPECT_EQ(g.CanonicalGroupSize(i), members.size());
      EXPECT_EQ(g.Members(static_cast<uint32_t>(i)), members);
    }
  }
}

GgufBuilder MixedKeys() {
  GgufBuilder b;
  // Variants of a few keys, repeated and interleaved: case, NUL tails,
  // white space, exact duplicates, and more than eight distinct spellings
  // of one canonical key.
  const std::vector<std::string> keys = {
      "general.name", "General.Name", std::string("general.name\0a", 14), " general.name", "general.name",
      "a.b",          "A.B",          "a.b",                             std::string("a.b\0", 4), "x",
      "",             " ",            std::string("\0", 1),              "X",  "general.NAME", "GENERAL.name",
      "general.name\t", std::string("general.name\0b", 14), "gEneral.name", "geNeral.name", "genEral.name",
      "a.b", "General.Name", "c.d"};
  for (size_t i = 0; i < keys.size(); ++i) b.AddKv(keys[i], GgufValue::U32(static_cast<uint32_t>(i)));
  return b;
}

TEST(KeyGroupsTest, MatchesBruteForceWhateverTheHash) {
  const std::vector<GgufBuilder> headers = {
      MixedKeys(),
      bench::HostileBuilder(bench::HostileKind::kKeyCollisions, 400),
      bench::HostileBuilder(bench::HostileKind::kEmptyKeys, 50),
      bench::HostileBuilder(bench::HostileKind::kManyKeys, 300),
  };
  for (const GgufBuilder& b : headers) {
    const Parsed p = Parse(b);
    for (KeyGroups::KeyHash hash : {static_cast<KeyGroups::KeyHash>(nullptr), &ConstantHash, &LengthHash}) {
      SCOPED_TRACE(hash == nullptr ? "absl hash" : hash == &ConstantHash ? "constant hash" : "length hash");
      ExpectMatchesBruteForce(p.header, hash);
    }
  }
}

TEST(KeyGroupsTest, CandidatesComeInFileOrder) {
  const Parsed p = Parse(MixedKeys());
  for (KeyGroups::KeyHash hash : {static_cast<KeyGroups::KeyHash>(nullptr), &ConstantHash}) {
    const KeyGroups g(p.header, hash);
    std::vector<uint32_t> seen;
    g.ForEachCandidate("general.name", [&](uint32_t i) {
      seen.push_back(i);
      return true;
    });
    EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end()));
    // Every KV whose canonical key is general.name is a candidate.
    for (uint32_t i : g.Members(0)) EXPECT_NE(std::find(seen.begin(), seen.end(), i), seen.end()) << i;
  }
}

// FirstOfEqualViews (the duplicate tensor names of GG5xxx) against the
// quadratic definition, over names drawn from a small alphabet so that many
// repeat, including empty ones.
TEST(FirstOfEqualViewsTest, MatchesBruteForce) {
  std::vector<std::string> names;
  uint64_t state = 12345;
  for (int i = 0; i < 3000; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    const size_t len = (state >> 60) % 4;
    std::string n;
    for (size_t k = 0; k < len; ++k) n += static_cast<char>('a' + ((state >> (20 + 3 * k)) % 3));
    names.push_back(n);
  }
  const std::vector<uint32_t> first =
      FirstOfEqualViews(names.size(), [&](size_t i) { return std::string_view(names[i]); });
  ASSERT_EQ(first.size(), names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    size_t want = i;
    for (size_t j = 0; j < i; ++j) {
      if (names[j] == names[i]) {
        want = j;
        break;
      }
    }
    ASSERT_EQ(first[i], want) << i << " '" << names[i] << "'";
  }
  EXPECT_TRUE(FirstOfEqualViews(0, [&](size_t) { return std::string_view(); }).empty());
}

// CanonicalView reads a word at a time: against the definition a byte at a
// time, with a NUL, a capital, a high byte (0xC1 is 'A' | 0x80, 0xDA 'Z' |
// 0x80, which must not count as capitals) and the neighbours of 'A' and 'Z'
// at every position of keys 0..40 bytes long, on either side of each word
// edge.
std::string ReferenceCanonical(std::string_view key) {
  key = key.substr(0, std::min(key.find('\0'), key.size()));
  std::string out;
  for (char c : key) out += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  const size_t first = out.find_first_not_of(" \t\n\v\f\r");
  if (first == std::string::npos) return "";
  return out.substr(first, out.find_last_not_of(" \t\n\v\f\r") - first + 1);
}

TEST(CanonicalViewTest, WordAtATimeMatchesTheByteDefinition) {
  const std::string specials = std::string("\0AZ@[\xc1\xda\xff\x80 ", 11) + "az";
  for (size_t len = 0; len <= 40; ++len) {
    for (size_t at = 0; at < len; ++at) {
      for (char c : specials) {
        for (size_t second = at; second < len; second += 7) {
          std::string key(len, 'k');
          key[at] = c;
          key[second] = specials[(at + second) % specials.size()];
          std::string scratch;
          const std::string_view got = CanonicalView(key, &scratch);
          ASSERT_EQ(std::string(got), ReferenceCanonical(key))
              << "len " << len << " at " << at << " byte " << int{static_cast<uint8_t>(c)} << " second " << second;
          ASSERT_EQ(std::string(got), CanonicalKey(key));
        }
      }
    }
  }
}

}  // namespace
}  // namespace ggufguard
