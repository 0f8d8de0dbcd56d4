// How many reads a header costs (issue 5). Not timed: reads are counted
// through a CountingSource over a MemorySource of a SmolLM2-like file built in
// memory by bench/bench_inputs.h (the files the benchmarks time), so the count
// is exact and the same on every machine. docs/performance.md has the
// matching strace figures for the command line.
//
// What the prefix schedule of ValidateSource (2 MiB, then x4 until the header
// fits) guarantees, and what is checked here:
//   - the reads depend only on the header's size in bytes, never on its
//     number of strings: exactly the schedule's prefixes, nothing per string,
//     per array or per chunk, and at most 8 for these files;
//   - ~196,000 and ~392,000 strings (3.6 and 7.2 MB headers, the same
//     schedule step) cost the same two reads;
//   - 4x the vocabulary of the 1.8 MB header (one read) costs one growth
//     step more: 4x the bytes is exactly the growth factor;
//   - each prefix extends the last: no byte is read twice.
#include <algorithm>
#include <cstdint>

#include "gtest/gtest.h"
#include "ggufguard/io/source.h"
#include "ggufguard/findings/policy.h"
#include "ggufguard/validate.h"
#include "tests/test_util.h"

#if defined(GGUFGUARD_HAVE_BENCH_INPUTS)
#include "bench/bench_inputs.h"
#endif

namespace ggufguard {
namespace {

#if defined(GGUFGUARD_HAVE_BENCH_INPUTS)

struct Counted {
  uint64_t reads = 0;
  uint64_t bytes_read = 0;
  uint64_t header_end = 0;  // end of the tensor infos
  uint64_t file_size = 0;
  uint64_t strings = 0;     // array strings in the metadata
};

// Builds the SmolLM2-like file with `vocab_scale` times the vocabulary and
// validates it through a counting source.
Counted ValidateCounted(uint32_t vocab_scale) {
  const testing::BuiltFile file = bench::SmolLm2LikeBuilder(vocab_scale).Build();
  MemorySource memory(file.bytes);
  CountingSource counting(memory);
  absl::StatusOr<ValidatedFile> validated = ValidateSource(counting, DefaultPolicy());
  EXPECT_TRUE(validated.ok()) << validated.status();
  Counted c;
  if (!validated.ok()) return c;
  const Report& report = validated->report();
  EXPECT_TRUE(report.valid());
  // SmolLM2's template writes a default system prompt when none is given:
  // that note (GG8017) is the one finding besides where the template comes
  // from.
  const std::vector<Finding> findings = testing::FindingsBesidesProvenance(report);
  EXPECT_EQ(findings.size(), 1u);
  for (const Finding& f : findings) EXPECT_EQ(f.rule, RuleId::kChatTemplateOwnText) << f.message;
  c.reads = counting.reads();
  c.bytes_read = counting.bytes_read();
  c.header_end = report.header.infos_end;
  c.file_size = file.file_size;
  for (const KeyValue& kv : report.header.kvs) {
    if (kv.type() == ValueType::kArray && kv.value().array.element_type == ValueType::kString) {
      c.strings += kv.value().array.count;
    }
  }
  return c;
}

// The default schedule for a header ending at `header_end`: first_prefix,
// then x growth, until one holds the header. Returns how many prefixes that
// takes and the last one's size.
struct Schedule {
  uint64_t reads = 1;
  uint64_t last_prefix = 0;
};
Schedule DefaultSchedule(uint64_t header_end) {
  const SourceOptions options;
  Schedule s;
  for (s.last_prefix = options.first_prefix; s.last_prefix < header_end; s.last_prefix *= options.growth) ++s.reads;
  return s;
}

TEST(SyscallBudgetTest, HeaderReadsDoNotDependOnTheNumberOfStrings) {
  const Counted one = ValidateCounted(1);
  const Counted two = ValidateCounted(2);
  const Counted four = ValidateCounted(4);

  // The inputs are what the benchmarks claim: ~98,000 strings in a ~1.8 MB
  // header, and 4x that.
  EXPECT_GT(one.strings, 97000u);
  EXPECT_GT(one.header_end, 1700000u);
  EXPECT_LT(one.header_end, 1900000u);
  EXPECT_EQ(four.strings, 4 * one.strings);
  EXPECT_GT(four.header_end, 7000000u);

  for (const Counted* c : {&one, &two, &four}) {
    SCOPED_TRACE(::testing::Message() << c->strings << " strings, header " << c->header_end << " bytes");
    EXPECT_LE(c->reads, 8u);
    // Exactly the schedule's prefixes: nothing per string, per array or per
    // tensor (the padding checks of these files need no byte past the prefix).
    const Schedule schedule = DefaultSchedule(c->header_end);
    EXPECT_EQ(c->reads, schedule.reads);
    // Each prefix extends the last one: the bytes read are exactly those of
    // the final prefix, never one twice.
    EXPECT_EQ(c->bytes_read, std::min(schedule.last_prefix, c->file_size));
  }

  // ~98,000 strings: one read. ~196,000 and ~392,000 strings: the same two
  // reads (both headers lie between the first prefix and the second).
  EXPECT_EQ(one.reads, 1u);
  EXPECT_EQ(two.reads, 2u);
  EXPECT_EQ(four.reads, two.reads);
  // 4x the strings is 4x the bytes, exactly the growth factor: at most one
  // growth step more, whatever the prefix size the schedule starts from.
  EXPECT_LE(four.reads, one.reads + 1);
}

#else  // !GGUFGUARD_HAVE_BENCH_INPUTS

TEST(SyscallBudgetTest, HeaderReadsDoNotDependOnTheNumberOfStrings) {
  GTEST_SKIP() << "ggufguard_tests is not linked with ggufguard_benchinputs: add to tests/CMakeLists.txt\n"
                  "  include(${PROJECT_SOURCE_DIR}/bench/bench_inputs.cmake)\n"
                  "  target_link_libraries(ggufguard_tests PRIVATE ggufguard_benchinputs)";
}

#endif

}  // namespace
}  // namespace ggufguard
