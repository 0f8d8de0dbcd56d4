// Large scratch memory that costs few page faults.
#ifndef GGUFGUARD_BASE_PAGE_BUFFER_H_
#define GGUFGUARD_BASE_PAGE_BUFFER_H_

#include <cstddef>
#include <cstdint>
#include <new>

namespace ggufguard {

// A block of bytes for a header prefix or a per-validation table. Not a
// std::vector: a vector zero-fills what it allocates, and every fresh 4 KiB
// page it touches is a page fault. On the VM of docs/performance.md a fault
// costs about 10 us, so a 512 KiB table took 1.4 ms to fault in, more than
// validating the header it served. From kHugeFrom bytes up a buffer is its
// own mapping, 2 MiB-aligned and advised for transparent huge pages: one
// fault per 2 MiB, the zeroing done by the kernel, and no memset (a fresh
// anonymous mapping reads as zeros). Below that, malloc or calloc.
// Where huge pages are off, madvise fails or is ignored and the mapping is
// ordinary memory: only the speed differs. Moving keeps the memory, so
// views into it stay valid. Throws std::bad_alloc when memory runs out.
class PageBuffer {
 public:
  static constexpr size_t kHugePage = size_t{2} << 20;
  static constexpr size_t kHugeFrom = size_t{256} << 10;

  PageBuffer() = default;
  // `size` bytes whose contents are unspecified (the caller writes them).
  static PageBuffer Uninitialised(size_t size) { return PageBuffer(size, /*zeroed=*/false); }
  // `size` bytes, all zero.
  static PageBuffer Zeroed(size_t size) { return PageBuffer(size, /*zeroed=*/true); }

  PageBuffer(PageBuffer&& other) noexcept;
  PageBuffer& operator=(PageBuffer&& other) noexcept;
  PageBuffer(const PageBuffer&) = delete;
  PageBuffer& operator=(const PageBuffer&) = delete;
  ~PageBuffer() { Release(); }

  uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  PageBuffer(size_t size, bool zeroed);
  void Release();

  uint8_t* data_ = nullptr;
  size_t size_ = 0;
  size_t mapped_ = 0;  // bytes of the mapping; 0 when data_ came from malloc
};

// An allocator for standard containers that can grow large (the parsed
// view's KVs and tensor infos: 32 MB for a million KVs). From
// PageBuffer::kHugeFrom bytes up each allocation is its own huge-page
// mapping, as PageBuffer's are: a std::vector of a million KVs otherwise
// faulted in 8,000 fresh 4 KiB pages, a third of validating that header
// (docs/performance.md, "Hostile headers"). Smaller ones come from malloc.
template <typename T>
class PageAllocator {
 public:
  using value_type = T;
  PageAllocator() = default;
  template <typename U>
  PageAllocator(const PageAllocator<U>&) noexcept {}  // NOLINT: converting, as allocators must
  T* allocate(size_t n) {
    if (n > SIZE_MAX / sizeof(T)) throw std::bad_alloc();
    return static_cast<T*>(PageAllocate(n * sizeof(T)));
  }
  void deallocate(T* p, size_t n) noexcept { PageFree(p, n * sizeof(T)); }
  friend bool operator==(const PageAllocator&, const PageAllocator&) { return true; }
  friend bool operator!=(const PageAllocator&, const PageAllocator&) { return false; }

 private:
  static void* PageAllocate(size_t bytes);
  static void PageFree(void* p, size_t bytes) noexcept;
  template <typename U>
  friend class PageAllocator;
};
void* PageAllocateBytes(size_t bytes);             // for PageAllocator
void PageFreeBytes(void* p, size_t bytes) noexcept;  // the same size
template <typename T>
void* PageAllocator<T>::PageAllocate(size_t bytes) {
  return PageAllocateBytes(bytes);
}
template <typename T>
void PageAllocator<T>::PageFree(void* p, size_t bytes) noexcept {
  PageFreeBytes(p, bytes);
}

// Scratch memory that a thread keeps for its next use: a few buffers of up
// to kKeepBytes each, so that `scan` and a library validating file after
// file fault their per-validation tables in once, then reuse them. The
// contents are unspecified. Buffers too large to keep are released.
class ReusedBuffer {
 public:
  static constexpr size_t kKeepBytes = size_t{4} << 20;
  static constexpr size_t kKept = 4;  // buffers a thread keeps

  ReusedBuffer() = default;
  explicit ReusedBuffer(size_t size) { Reserve(size); }
  ~ReusedBuffer() { GiveBack(); }
  ReusedBuffer(const ReusedBuffer&) = delete;
  ReusedBuffer& operator=(const ReusedBuffer&) = delete;

  // At least `size` bytes, keeping none of the old contents.
  void Reserve(size_t size);
  uint8_t* data() const { return buffer_.data(); }
  size_t size() const { return buffer_.size(); }

 private:
  void GiveBack();
  PageBuffer buffer_;
};

}  // namespace ggufguard

#endif  // GGUFGUARD_BASE_PAGE_BUFFER_H_
