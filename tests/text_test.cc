// base/text: the scalar UTF-8 check against RFC 3629's table, and the
// vectorised scan (ScanTextBulk, which the rules trust for whole string
// arrays) against the scalar check and a plain zero count, at every place a
// 32-byte block or a 1 KiB page boundary can cut a sequence, in both kinds
// of page.
#include "ggufguard/base/text.h"

#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"

namespace ggufguard {
namespace {

std::string_view View(const std::vector<uint8_t>& b) {
  return {reinterpret_cast<const char*>(b.data()), b.size()};
}

uint64_t NaiveZeroCount(const std::vector<uint8_t>& b) {
  uint64_t zeros = 0;
  for (uint8_t x : b) zeros += x == 0;
  return zeros;
}

TEST(FindInvalidUtf8, AcceptsEveryWellFormedRange) {
  // One sequence from each row of RFC 3629's table of well-formed sequences,
  // at both ends of each range.
  for (std::string s : {"a", "\x7f", "\xc2\x80", "\xdf\xbf", "\xe0\xa0\x80", "\xe0\xbf\xbf", "\xe1\x80\x80",
                        "\xec\xbf\xbf", "\xed\x80\x80", "\xed\x9f\xbf", "\xee\x80\x80", "\xef\xbf\xbf",
                        "\xf0\x90\x80\x80", "\xf0\xbf\xbf\xbf", "\xf1\x80\x80\x80", "\xf3\xbf\xbf\xbf",
                        "\xf4\x80\x80\x80", "\xf4\x8f\xbf\xbf"}) {
    EXPECT_EQ(FindInvalidUtf8(s), kValidUtf8) << EscapeForDisplay(s);
  }
  EXPECT_EQ(FindInvalidUtf8(std::string_view("\0", 1)), kValidUtf8);  // NUL is valid UTF-8; a rule catches it
}

// The one decoder and the one encoder agree on every scalar value: each
// encodes to the shortest form, which decodes back to it and nothing else;
// surrogates encode as U+FFFD. Every two-byte string decodes as a sequence
// exactly when the encoder writes it.
TEST(DecodeUtf8At, RoundTripsEveryScalarValueAndNothingElse) {
  std::string encoded;
  for (uint32_t cp = 0; cp <= 0x10FFFF; ++cp) {
    encoded.clear();
    AppendUtf8(&encoded, cp);
    const bool surrogate = cp >= 0xD800 && cp <= 0xDFFF;
    const uint32_t want = surrogate ? 0xFFFD : cp;
    const Utf8Sequence seq = DecodeUtf8At(encoded, 0);
    ASSERT_EQ(seq.length, encoded.size()) << cp;
    ASSERT_EQ(seq.code_point, want) << cp;
    ASSERT_EQ(encoded.size(), want < 0x80 ? 1u : want < 0x800 ? 2u : want < 0x10000 ? 3u : 4u) << cp;
    // A truncated sequence is no sequence.
    if (encoded.size() > 1) {
      ASSERT_EQ(DecodeUtf8At(encoded.substr(0, encoded.size() - 1), 0).length, 0u) << cp;
    }
  }
  for (uint32_t a = 0x80; a <= 0xFF; ++a) {
    for (uint32_t b = 0; b <= 0xFF; ++b) {
      const std::string two{static_cast<char>(a), static_cast<char>(b)};
      const bool written = a >= 0xC2 && a <= 0xDF && (b & 0xC0) == 0x80;
      EXPECT_EQ(DecodeUtf8At(two, 0).length == 2, written) << a << " " << b;
      EXPECT_EQ(IsValidUtf8(two), written) << a << " " << b;
    }
  }
}

TEST(FindInvalidUtf8, ReportsTheFirstByteOfTheBadSequence) {
  struct Case {
    std::string text;
    size_t at;
  };
  for (const Case& c : std::vector<Case>{
           {"ab\x80", 2},                // lone continuation
           {"\xc0\xaf", 0},              // overlong 2-byte
           {"\xc1\xbf", 0},              // overlong 2-byte
           {"x\xe0\x9f\xbf", 1},         // overlong 3-byte
           {"\xed\xa0\x80", 0},          // surrogate
           {"\xf0\x8f\xbf\xbf", 0},      // overlong 4-byte
           {"\xf4\x90\x80\x80", 0},      // above U+10FFFF
           {"\xf5\x80\x80\x80", 0},      // lead byte that cannot occur
           {"\xff", 0},
           {"abc\xe2\x82", 3},           // cut by the end
           {"\xe2\x82z", 0},             // cut by ASCII
           {"\xc3\xa9\xc3", 2},          // a good sequence, then a cut one
       }) {
    EXPECT_EQ(FindInvalidUtf8(c.text), c.at) << EscapeForDisplay(c.text);
  }
}

// Byte values at every boundary of the validity table.
constexpr uint8_t kEdges[] = {0x00, 0x41, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc1, 0xc2, 0xdf, 0xe0,
                              0xe1, 0xec, 0xed, 0xee, 0xef, 0xf0, 0xf1, 0xf3, 0xf4, 0xf5, 0xf8, 0xff};

TEST(ScanTextBulk, AgreesWithScalarOnEveryEdgeSequenceAcrossBlockBoundaries) {
  constexpr size_t kEdgeCount = sizeof kEdges;
  size_t checked = 0, valid = 0;
  std::vector<uint8_t> buf;
  auto check = [&](const uint8_t* seq, size_t len, size_t before, size_t after) {
    buf.assign(before, 'a');
    buf.insert(buf.end(), seq, seq + len);
    buf.insert(buf.end(), after, 'b');
    const bool scalar = FindInvalidUtf8(View(buf)) == kValidUtf8;
    const TextScan scan = ScanTextBulk(buf.data(), buf.size());
    ASSERT_EQ(scan.valid_utf8, scalar)
        << "sequence " << EscapeForDisplay(std::string_view(reinterpret_cast<const char*>(seq), len)) << " after "
        << before << " bytes, before " << after;
    ASSERT_EQ(scan.zero_bytes, NaiveZeroCount(buf));
    ++checked;
    valid += scalar;
  };
  uint8_t seq[4];
  // Sequences of 1 to 3 edge bytes, cut by each place a block can end
  // (32-byte blocks, two a step: the sequence straddles byte 31/32, 63/64
  // and 127/128), ending the buffer or followed by ASCII; after 70 ASCII
  // bytes a whole step is ASCII, the vectorised path's shortcut.
  for (size_t len = 1; len <= 3; ++len) {
    size_t combos = 1;
    for (size_t k = 0; k < len; ++k) combos *= kEdgeCount;
    for (size_t c = 0; c < combos; ++c) {
      for (size_t k = 0, x = c; k < len; ++k, x /= kEdgeCount) seq[k] = kEdges[x % kEdgeCount];
      for (size_t before : {0, 29, 30, 31, 32, 62, 63, 126}) {
        for (size_t after : {0, 1, 40, 70}) check(seq, len, before, after);
      }
    }
  }
  // Four-byte sequences: every combination, at the block boundary.
  for (size_t c = 0; c < kEdgeCount * kEdgeCount * kEdgeCount * kEdgeCount; ++c) {
    for (size_t k = 0, x = c; k < 4; ++k, x /= kEdgeCount) seq[k] = kEdges[x % kEdgeCount];
    for (size_t before : {0, 29, 30}) check(seq, 4, before, before == 30 ? 0 : 33);
  }
  // Not vacuous: both verdicts occur many times.
  EXPECT_GT(valid, 10000u);
  EXPECT_GT(checked - valid, 10000u);
}

// ScanTextBulk runs its 64-byte steps in pages of 1 KiB: a page after an
// all-ASCII page (and the first) takes a per-step ASCII shortcut, any other
// page runs without it. Each edge sequence is checked in each kind of page,
// across the page boundary, and where the page after it switches back.
TEST(ScanTextBulk, AgreesWithScalarInBothKindsOfPage) {
  const std::vector<uint8_t> ascii_page(1024, 'a');
  std::vector<uint8_t> non_ascii_page;
  for (int k = 0; k < 512; ++k) non_ascii_page.insert(non_ascii_page.end(), {0xc3, 0xa9});  // 'é'
  struct Prefix {
    const char* what;
    std::vector<uint8_t> bytes;
    std::vector<size_t> befores;  // ASCII bytes between the prefix and the sequence
  };
  // After a whole page, 31 and 63 bytes put the sequence across a block
  // boundary; after 1000 bytes, 22 and 23 across the page boundary.
  const std::vector<size_t> in_page = {0, 31, 63}, across_pages = {22, 23};
  std::vector<Prefix> prefixes = {
      {"an ASCII page", ascii_page, in_page},
      {"a non-ASCII page", non_ascii_page, in_page},
      {"a non-ASCII page, then an ASCII one", non_ascii_page, in_page},
      {"1000 ASCII bytes", std::vector<uint8_t>(ascii_page.begin(), ascii_page.begin() + 1000), across_pages},
      {"1000 non-ASCII bytes", std::vector<uint8_t>(non_ascii_page.begin(), non_ascii_page.begin() + 1000),
       across_pages},
  };
  prefixes[2].bytes.insert(prefixes[2].bytes.end(), ascii_page.begin(), ascii_page.end());
  constexpr size_t kEdgeCount = sizeof kEdges;
  size_t checked = 0, valid = 0;
  std::vector<uint8_t> buf;
  uint8_t seq[3];
  for (const Prefix& prefix : prefixes) {
    for (size_t len = 1; len <= 3; ++len) {
      size_t combos = 1;
      for (size_t k = 0; k < len; ++k) combos *= kEdgeCount;
      for (size_t c = 0; c < combos; ++c) {
        for (size_t k = 0, x = c; k < len; ++k, x /= kEdgeCount) seq[k] = kEdges[x % kEdgeCount];
        for (size_t before : prefix.befores) {
          // Ending the buffer, cut by one ASCII byte, or followed by more
          // than a page of ASCII (an ASCII step, then an ASCII page).
          for (size_t after : {0, 1, 1100}) {
            buf = prefix.bytes;
            buf.insert(buf.end(), before, 'a');
            buf.insert(buf.end(), seq, seq + len);
            buf.insert(buf.end(), after, 'b');
            const bool scalar = FindInvalidUtf8(View(buf)) == kValidUtf8;
            const TextScan scan = ScanTextBulk(buf.data(), buf.size());
            ASSERT_EQ(scan.valid_utf8, scalar)
                << "sequence " << EscapeForDisplay(std::string_view(reinterpret_cast<const char*>(seq), len))
                << " after " << prefix.what << " and " << before << " bytes, before " << after;
            ASSERT_EQ(scan.zero_bytes, NaiveZeroCount(buf));
            ++checked;
            valid += scalar;
          }
        }
      }
    }
  }
  EXPECT_GT(valid, 10000u);
  EXPECT_GT(checked - valid, 10000u);
}

TEST(ScanTextBulk, AgreesWithScalarOnDamagedText) {
  // Well-formed text of every sequence length, then up to three changes
  // (a random byte, a deletion, a cut), so that most errors sit among valid
  // multi-byte sequences as in a real vocabulary.
  std::mt19937_64 rng(20261130);
  auto append = [](std::vector<uint8_t>& b, uint32_t cp) {
    if (cp < 0x80) {
      b.push_back(static_cast<uint8_t>(cp));
    } else if (cp < 0x800) {
      b.insert(b.end(), {static_cast<uint8_t>(0xc0 | cp >> 6), static_cast<uint8_t>(0x80 | (cp & 0x3f))});
    } else if (cp < 0x10000) {
      b.insert(b.end(), {static_cast<uint8_t>(0xe0 | cp >> 12), static_cast<uint8_t>(0x80 | ((cp >> 6) & 0x3f)),
                         static_cast<uint8_t>(0x80 | (cp & 0x3f))});
    } else {
      b.insert(b.end(), {static_cast<uint8_t>(0xf0 | cp >> 18), static_cast<uint8_t>(0x80 | ((cp >> 12) & 0x3f)),
                         static_cast<uint8_t>(0x80 | ((cp >> 6) & 0x3f)), static_cast<uint8_t>(0x80 | (cp & 0x3f))});
    }
  };
  size_t valid = 0;
  constexpr int kRuns = 20000;
  for (int run = 0; run < kRuns; ++run) {
    std::vector<uint8_t> b;
    const size_t n = run % 10 == 0 ? rng() % 5000 : rng() % 300;  // some span several 1 KiB pages
    while (b.size() < n) {
      uint32_t cp;
      // Every third run is almost all ASCII, so that whole pages are ASCII
      // and the scan switches between its two kinds of page.
      const uint64_t kind = run % 3 == 0 && rng() % 64 != 0 ? 0 : rng() % 4;
      switch (kind) {
        case 0: cp = rng() % 0x80; break;
        case 1: cp = 0x80 + rng() % (0x800 - 0x80); break;
        case 2:
          do cp = 0x800 + rng() % (0x10000 - 0x800);
          while (cp >= 0xd800 && cp <= 0xdfff);
          break;
        default: cp = 0x10000 + rng() % (0x110000 - 0x10000); break;
      }
      append(b, cp);
    }
    ASSERT_TRUE(ScanTextBulk(b.data(), b.size()).valid_utf8);
    for (uint64_t changes = rng() % 4; changes > 0 && !b.empty(); --changes) {
      const size_t at = rng() % b.size();
      switch (rng() % 3) {
        case 0: b[at] = static_cast<uint8_t>(rng()); break;
        case 1: b.erase(b.begin() + static_cast<std::ptrdiff_t>(at)); break;
        default: b.resize(at); break;
      }
    }
    const bool scalar = FindInvalidUtf8(View(b)) == kValidUtf8;
    const TextScan scan = ScanTextBulk(b.data(), b.size());
    ASSERT_EQ(scan.valid_utf8, scalar) << "run " << run;
    ASSERT_EQ(scan.zero_bytes, NaiveZeroCount(b)) << "run " << run;
    valid += scalar;
  }
  EXPECT_GT(valid, kRuns / 10u);
  EXPECT_LT(valid, kRuns * 9u / 10);
}

TEST(CountZeroBytes, CountsAcrossVectorAndTailBoundaries) {
  // Sizes around the 16/32/64-byte steps, ScanTextBulk's 1 KiB pages (whose
  // counts it folds at each page's end) and CountZeroBytes's 255-step fold.
  std::mt19937_64 rng(7);
  for (size_t size : {0, 1, 15, 16, 17, 31, 32, 33, 63, 64, 65, 1023, 1024, 1025, 1024 + 95, 255 * 32 - 1, 255 * 32,
                      255 * 32 + 31, 255 * 64, 255 * 64 + 70, 100000}) {
    std::vector<uint8_t> b(size);
    for (uint8_t& x : b) x = (rng() % 3 == 0) ? 0 : static_cast<uint8_t>(1 + rng() % 127);  // ASCII: valid UTF-8
    EXPECT_EQ(CountZeroBytes(b.data(), b.size()), NaiveZeroCount(b)) << "size " << size;
    const TextScan scan = ScanTextBulk(b.data(), b.size());
    EXPECT_TRUE(scan.valid_utf8);
    EXPECT_EQ(scan.zero_bytes, NaiveZeroCount(b)) << "size " << size;
  }
  for (size_t size : {255 * 32 + 5, 255 * 64 * 2 + 5}) {  // every lane at its fold limit
    std::vector<uint8_t> all_zero(size, 0);
    EXPECT_EQ(CountZeroBytes(all_zero.data(), all_zero.size()), size);
    EXPECT_EQ(ScanTextBulk(all_zero.data(), all_zero.size()).zero_bytes, size);
  }
}

TEST(EscapeForDisplay, EscapesWhatATerminalOrAReportCouldMisread) {
  EXPECT_EQ(EscapeForDisplay("ok"), "ok");
  EXPECT_EQ(EscapeForDisplay(std::string_view("a\0'\"\\\x1b\xc3", 7)), "a\\x00\\x27\\x22\\x5c\\x1b\\xc3");
  EXPECT_EQ(EscapeForDisplay(std::string(70, 'x'), 64), std::string(48, 'x') + "..." + std::string(16, 'x'));
  EXPECT_EQ(EscapeForDisplay(std::string(64, 'x'), 64), std::string(64, 'x'));
  // Two long names that differ only at the end read apart.
  const std::string prefix(100, 'p');
  EXPECT_EQ(EscapeForDisplay(prefix + "_a.weight", 64), std::string(48, 'p') + "..." + std::string(7, 'p') + "_a.weight");
  EXPECT_NE(EscapeForDisplay(prefix + "_a.weight", 64), EscapeForDisplay(prefix + "_b.weight", 64));
  EXPECT_EQ(EscapeForDisplay(std::string(70, 'x') + "\x1b", 8), "xxxxxx...x\\x1b");
}

}  // namespace
}  // namespace ggufguard
