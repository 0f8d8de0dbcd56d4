#include "ggufguard/base/page_buffer.h"

#include <sys/mman.h>

#include <array>
#include <cstdlib>
#include <new>
#include <utility>

namespace ggufguard {

namespace {

// Whole huge pages, at a huge-page boundary: maps one page more than
// needed, then unmaps the slack on both sides of the aligned part.
// *mapped receives the bytes mapped (`size` rounded up to 2 MiB).
uint8_t* MapHugePages(size_t size, size_t* mapped) {
  if (size > SIZE_MAX - 2 * PageBuffer::kHugePage) throw std::bad_alloc();
  const size_t rounded = (size + PageBuffer::kHugePage - 1) & ~(PageBuffer::kHugePage - 1);
  const size_t span = rounded + PageBuffer::kHugePage;
  void* raw = ::mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) throw std::bad_alloc();
  const uintptr_t start = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t aligned = (start + PageBuffer::kHugePage - 1) & ~uintptr_t{PageBuffer::kHugePage - 1};
  if (aligned > start) (void)::munmap(raw, aligned - start);
  const size_t after = (start + span) - (aligned + rounded);
  if (after > 0) (void)::munmap(reinterpret_cast<void*>(aligned + rounded), after);
  uint8_t* data = reinterpret_cast<uint8_t*>(aligned);
#ifdef MADV_HUGEPAGE
  (void)::madvise(data, rounded, MADV_HUGEPAGE);
#endif
  *mapped = rounded;
  return data;
}

size_t HugeMappingSize(size_t size) { return (size + PageBuffer::kHugePage - 1) & ~(PageBuffer::kHugePage - 1); }

}  // namespace

void* PageAllocateBytes(size_t bytes) {
  if (bytes < PageBuffer::kHugeFrom) {
    void* p = std::malloc(bytes == 0 ? 1 : bytes);
    if (p == nullptr) throw std::bad_alloc();
    return p;
  }
  size_t mapped;
  return MapHugePages(bytes, &mapped);
}

void PageFreeBytes(void* p, size_t bytes) noexcept {
  if (p == nullptr) return;
  if (bytes < PageBuffer::kHugeFrom) {
    std::free(p);
  } else {
    (void)::munmap(p, HugeMappingSize(bytes));
  }
}

PageBuffer::PageBuffer(size_t size, bool zeroed) : size_(size) {
  if (size == 0) return;
  if (size < kHugeFrom) {
    void* p = zeroed ? std::calloc(size, 1) : std::malloc(size);
    if (p == nullptr) throw std::bad_alloc();
    data_ = static_cast<uint8_t*>(p);
    return;
  }
  data_ = MapHugePages(size, &mapped_);
}

PageBuffer::PageBuffer(PageBuffer&& other) noexcept
    : data_(other.data_), size_(other.size_), mapped_(other.mapped_) {
  other.data_ = nullptr;
  other.size_ = 0;
  other.mapped_ = 0;
}

PageBuffer& PageBuffer::operator=(PageBuffer&& other) noexcept {
  if (this != &other) {
    Release();
    data_ = other.data_;
    size_ = other.size_;
    mapped_ = other.mapped_;
    other.data_ = nullptr;
    other.size_ = 0;
    other.mapped_ = 0;
  }
  return *this;
}

void PageBuffer::Release() {
  if (data_ == nullptr) return;
  if (mapped_ != 0) {
    (void)::munmap(data_, mapped_);
  } else {
    std::free(data_);
  }
  data_ = nullptr;
  size_ = 0;
  mapped_ = 0;
}

namespace {
thread_local std::array<PageBuffer, ReusedBuffer::kKept> kept_buffers;
}  // namespace

void ReusedBuffer::Reserve(size_t size) {
  if (buffer_.size() >= size) return;
  GiveBack();
  // The smallest kept buffer that is large enough.
  PageBuffer* best = nullptr;
  for (PageBuffer& b : kept_buffers) {
    if (b.size() >= size && (best == nullptr || b.size() < best->size())) best = &b;
  }
  buffer_ = best != nullptr ? std::move(*best) : PageBuffer::Uninitialised(size);
}

void ReusedBuffer::GiveBack() {
  if (buffer_.size() == 0 || buffer_.size() > kKeepBytes) {
    buffer_ = PageBuffer();
    return;
  }
  // An empty slot, else the smallest kept buffer if this one is larger.
  PageBuffer* slot = &kept_buffers[0];
  for (PageBuffer& b : kept_buffers) {
    if (b.size() < slot->size()) slot = &b;
  }
  if (slot->size() < buffer_.size()) *slot = std::move(buffer_);
  buffer_ = PageBuffer();
}

}  // namespace ggufguard
