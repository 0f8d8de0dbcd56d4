// PageBuffer: zeroed when asked, huge-page aligned from kHugeFrom up,
// and its memory kept across moves (views into a prefix stay valid).
#include "ggufguard/base/page_buffer.h"

#include <cstring>
#include <utility>

#include "gtest/gtest.h"

namespace ggufguard {
namespace {

bool AllZero(const PageBuffer& b) {
  for (size_t i = 0; i < b.size(); ++i) {
    if (b.data()[i] != 0) return false;
  }
  return true;
}

TEST(PageBufferTest, ZeroedIsZeroOnEitherSideOfTheHugePageThreshold) {
  for (size_t size : {size_t{1}, PageBuffer::kHugeFrom - 1, PageBuffer::kHugeFrom, PageBuffer::kHugePage + 1}) {
    // A buffer of the same size written and freed first, so that a reused
    // block would show through if Zeroed did not clear it.
    {
      PageBuffer dirty = PageBuffer::Uninitialised(size);
      std::memset(dirty.data(), 0xA5, dirty.size());
    }
    PageBuffer b = PageBuffer::Zeroed(size);
    ASSERT_NE(b.data(), nullptr);
    EXPECT_EQ(b.size(), size);
    EXPECT_TRUE(AllZero(b)) << size;
  }
}

TEST(PageBufferTest, LargeBuffersStartAtAHugePageAndAreWritableToTheEnd) {
  for (size_t size : {PageBuffer::kHugeFrom, PageBuffer::kHugePage, 3 * PageBuffer::kHugePage + 7}) {
    PageBuffer b = PageBuffer::Uninitialised(size);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(b.data()) % PageBuffer::kHugePage, 0u) << size;
    std::memset(b.data(), 1, b.size());  // ASan and the kernel would object past the mapping
    EXPECT_EQ(b.data()[size - 1], 1);
  }
}

TEST(PageBufferTest, MovingKeepsTheMemoryAndEmptiesTheSource) {
  for (size_t size : {size_t{100}, PageBuffer::kHugeFrom}) {
    PageBuffer a = PageBuffer::Zeroed(size);
    uint8_t* const bytes = a.data();
    bytes[0] = 7;
    PageBuffer b(std::move(a));
    EXPECT_EQ(b.data(), bytes);
    EXPECT_EQ(b.size(), size);
    EXPECT_EQ(a.data(), nullptr);  // NOLINT(bugprone-use-after-move): the moved-from state is specified
    EXPECT_EQ(a.size(), 0u);
    PageBuffer c = PageBuffer::Zeroed(16);
    c = std::move(b);
    EXPECT_EQ(c.data(), bytes);
    EXPECT_EQ(c.data()[0], 7);
  }
  PageBuffer empty = PageBuffer::Zeroed(0);
  EXPECT_EQ(empty.data(), nullptr);
  EXPECT_EQ(empty.size(), 0u);
}

}  // namespace
}  // namespace ggufguard
