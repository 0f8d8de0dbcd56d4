#include "tests/support/gguf_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"

namespace ggufguard::testing {

namespace gguf_writer_internal {
// Receives the file in order; Zeros lets a file sink leave holes.
class Sink {
 public:
  virtual ~Sink() = default;
  virtual void Bytes(const uint8_t* p, size_t n) = 0;
  virtual void Zeros(uint64_t n) = 0;
};
}  // namespace gguf_writer_internal

namespace {

using gguf_writer_internal::Sink;

// A wrong test input must stop the test run, not become a different file.
[[noreturn]] void Die(std::string_view message) {
  std::fprintf(stderr, "gguf_writer: %.*s\n", static_cast<int>(message.size()), message.data());
  std::abort();
}

uint64_t Add(uint64_t a, uint64_t b) {
  uint64_t out;
  if (__builtin_add_overflow(a, b, &out)) Die("size overflow (add)");
  return out;
}

uint64_t Mul(uint64_t a, uint64_t b) {
  uint64_t out;
  if (__builtin_mul_overflow(a, b, &out)) Die("size overflow (multiply)");
  return out;
}

// The spec's align_offset; works for any non-zero alignment, so tests can
// lay out files with odd alignments too.
uint64_t AlignUp(uint64_t offset, uint64_t alignment) {
  return Add(offset, (alignment - offset % alignment) % alignment);
}


GgufValue Scalar(ValueType type, uint64_t bits, uint8_t width) {
  GgufValue v;
  v.type_id = static_cast<uint32_t>(type);
  v.encoding = GgufValue::Encoding::kScalar;
  v.scalar_bits = bits;
  v.scalar_width = width;
  return v;
}

template <typename T, typename Make>
GgufValue ArrayOf(ValueType elem, const std::vector<T>& values, Make make) {
  std::vector<GgufValue> elems;
  elems.reserve(values.size());
  for (const T& v : values) elems.push_back(make(v));
  return GgufValue::Array(elem, std::move(elems));
}

// Appends fields in the file's byte order and field widths.
class Encoder {
 public:
  Encoder(std::vector<uint8_t>& out, bool big_endian, bool v1_layout)
      : out_(out), big_endian_(big_endian), v1_layout_(v1_layout) {}

  uint64_t pos() const { return out_.size(); }

  void Uint(uint64_t v, int width) {
    for (int i = 0; i < width; ++i) {
      int shift = 8 * (big_endian_ ? width - 1 - i : i);
      out_.push_back(static_cast<uint8_t>(v >> shift));
    }
  }
  void U32(uint64_t v) {
    if (v > UINT32_MAX) Die("value does not fit a u32 field");
    Uint(v, 4);
  }
  // Counts, string lengths, array counts and dims: u32 in v1, u64 after.
  void Len(uint64_t v) {
    if (v1_layout_) {
      U32(v);
    } else {
      Uint(v, 8);
    }
  }
  void Bytes(std::string_view bytes) { out_.insert(out_.end(), bytes.begin(), bytes.end()); }
  void String(std::string_view bytes, std::optional<uint64_t> declared_len) {
    Len(declared_len.value_or(bytes.size()));
    Bytes(bytes);
  }

  // The value without its type id: what an array element is on disk.
  void Payload(const GgufValue& v) {
    switch (v.encoding) {
      case GgufValue::Encoding::kScalar:
        if (v.scalar_width != 1 && v.scalar_width != 2 && v.scalar_width != 4 &&
            v.scalar_width != 8) {
          Die("scalar_width must be 1, 2, 4 or 8");
        }
        Uint(v.scalar_bits, v.scalar_width);
        return;
      case GgufValue::Encoding::kString:
        String(v.str, v.declared_length);
        return;
      case GgufValue::Encoding::kArray:
        U32(v.array_elem_type);
        Len(v.declared_length.value_or(v.elems.size()));
        for (const GgufValue& e : v.elems) Payload(e);
        return;
      case GgufValue::Encoding::kRaw:
        out_.insert(out_.end(), v.raw.begin(), v.raw.end());
        return;
    }
    Die("bad encoding");
  }

 private:
  std::vector<uint8_t>& out_;
  bool big_endian_;
  bool v1_layout_;
};

class MemorySink : public Sink {
 public:
  explicit MemorySink(std::vector<uint8_t>& out) : out_(out) {}
  void Bytes(const uint8_t* p, size_t n) override { out_.insert(out_.end(), p, p + n); }
  void Zeros(uint64_t n) override { out_.resize(Add(out_.size(), n), 0); }

 private:
  std::vector<uint8_t>& out_;
};

class FileSink : public Sink {
 public:
  FileSink(int fd, bool sparse) : fd_(fd), sparse_(sparse) {}

  void Bytes(const uint8_t* p, size_t n) override {
    while (n > 0 && error_.empty()) {
      size_t take = std::min(n, kBufferSize - buffer_.size());
      buffer_.insert(buffer_.end(), p, p + take);
      p += take;
      n -= take;
      if (buffer_.size() == kBufferSize) Flush();
    }
  }

  void Zeros(uint64_t n) override {
    if (!sparse_) {
      static const std::array<uint8_t, 4096> kZeroBlock{};
      while (n > 0 && error_.empty()) {
        size_t take = static_cast<size_t>(std::min<uint64_t>(n, kZeroBlock.size()));
        Bytes(kZeroBlock.data(), take);
        n -= take;
      }
      return;
    }
    Flush();
    if (error_.empty() && n > 0 &&
        lseek(fd_, static_cast<off_t>(n), SEEK_CUR) == static_cast<off_t>(-1)) {
      Fail("lseek");
    }
  }

  void Flush() {
    size_t done = 0;
    while (done < buffer_.size() && error_.empty()) {
      ssize_t w = write(fd_, buffer_.data() + done, buffer_.size() - done);
      if (w < 0) {
        if (errno != EINTR) Fail("write");
        continue;
      }
      done += static_cast<size_t>(w);
    }
    buffer_.clear();
  }

  void Fail(const char* what) { error_ = absl::StrCat(what, ": ", std::strerror(errno)); }
  const std::string& error() const { return error_; }

 private:
  static constexpr size_t kBufferSize = size_t{1} << 20;
  int fd_;
  bool sparse_;
  std::vector<uint8_t> buffer_;
  std::string error_;
};

// The deterministic fill: never zero, so data is told apart from padding, and
// offset by the tensor index, so swapped tensors are told apart too.
uint8_t PatternByte(uint64_t tensor_index, uint64_t pos) {
  return static_cast<uint8_t>(1 + (pos * 7 + tensor_index * 13) % 251);
}

}  // namespace

// --- GgufValue ---

GgufValue GgufValue::U8(uint8_t v) { return Scalar(ValueType::kUint8, v, 1); }
GgufValue GgufValue::I8(int8_t v) { return Scalar(ValueType::kInt8, static_cast<uint8_t>(v), 1); }
GgufValue GgufValue::U16(uint16_t v) { return Scalar(ValueType::kUint16, v, 2); }
GgufValue GgufValue::I16(int16_t v) {
  return Scalar(ValueType::kInt16, static_cast<uint16_t>(v), 2);
}
GgufValue GgufValue::U32(uint32_t v) { return Scalar(ValueType::kUint32, v, 4); }
GgufValue GgufValue::I32(int32_t v) {
  return Scalar(ValueType::kInt32, static_cast<uint32_t>(v), 4);
}
GgufValue GgufValue::F32(float v) {
  return Scalar(ValueType::kFloat32, std::bit_cast<uint32_t>(v), 4);
}
GgufValue GgufValue::Bool(bool v) { return Scalar(ValueType::kBool, v ? 1 : 0, 1); }
GgufValue GgufValue::U64(uint64_t v) { return Scalar(ValueType::kUint64, v, 8); }
GgufValue GgufValue::I64(int64_t v) {
  return Scalar(ValueType::kInt64, static_cast<uint64_t>(v), 8);
}
GgufValue GgufValue::F64(double v) {
  return Scalar(ValueType::kFloat64, std::bit_cast<uint64_t>(v), 8);
}

GgufValue GgufValue::Str(std::string_view bytes) {
  GgufValue v;
  v.type_id = static_cast<uint32_t>(ValueType::kString);
  v.encoding = Encoding::kString;
  v.str = std::string(bytes);
  return v;
}

GgufValue GgufValue::Array(ValueType elem, std::vector<GgufValue> elems) {
  for (const GgufValue& e : elems) {
    if (e.type_id != static_cast<uint32_t>(elem)) {
      Die("Array: element type differs from the array's (use ArrayWithElemType)");
    }
  }
  return ArrayWithElemType(static_cast<uint32_t>(elem), std::move(elems));
}

GgufValue GgufValue::U8Array(std::vector<uint8_t> v) { return ArrayOf(ValueType::kUint8, v, U8); }
GgufValue GgufValue::I8Array(std::vector<int8_t> v) { return ArrayOf(ValueType::kInt8, v, I8); }
GgufValue GgufValue::U16Array(std::vector<uint16_t> v) {
  return ArrayOf(ValueType::kUint16, v, U16);
}
GgufValue GgufValue::I16Array(std::vector<int16_t> v) { return ArrayOf(ValueType::kInt16, v, I16); }
GgufValue GgufValue::U32Array(std::vector<uint32_t> v) {
  return ArrayOf(ValueType::kUint32, v, U32);
}
GgufValue GgufValue::I32Array(std::vector<int32_t> v) { return ArrayOf(ValueType::kInt32, v, I32); }
GgufValue GgufValue::U64Array(std::vector<uint64_t> v) {
  return ArrayOf(ValueType::kUint64, v, U64);
}
GgufValue GgufValue::I64Array(std::vector<int64_t> v) { return ArrayOf(ValueType::kInt64, v, I64); }
GgufValue GgufValue::F32Array(std::vector<float> v) {
  return ArrayOf(ValueType::kFloat32, v, F32);
}
GgufValue GgufValue::F64Array(std::vector<double> v) {
  return ArrayOf(ValueType::kFloat64, v, F64);
}
GgufValue GgufValue::BoolArray(std::vector<bool> v) {
  return ArrayOf(ValueType::kBool, v, [](bool b) { return Bool(b); });
}
GgufValue GgufValue::StrArray(std::vector<std::string> v) {
  return ArrayOf(ValueType::kString, v, [](const std::string& s) { return Str(s); });
}

GgufValue GgufValue::Raw(uint32_t type_id, std::vector<uint8_t> payload) {
  GgufValue v;
  v.type_id = type_id;
  v.encoding = Encoding::kRaw;
  v.raw = std::move(payload);
  return v;
}

GgufValue GgufValue::BoolByte(uint8_t byte) { return Scalar(ValueType::kBool, byte, 1); }

GgufValue GgufValue::StrWithLength(std::string bytes, uint64_t declared_len) {
  GgufValue v = Str(bytes);
  v.declared_length = declared_len;
  return v;
}

GgufValue GgufValue::ArrayWithCount(ValueType elem, std::vector<GgufValue> elems,
                                    uint64_t declared_count) {
  GgufValue v = Array(elem, std::move(elems));
  v.declared_length = declared_count;
  return v;
}

GgufValue GgufValue::ArrayWithElemType(uint32_t declared_elem_type, std::vector<GgufValue> elems) {
  GgufValue v;
  v.type_id = static_cast<uint32_t>(ValueType::kArray);
  v.encoding = Encoding::kArray;
  v.array_elem_type = declared_elem_type;
  v.elems = std::move(elems);
  return v;
}

// --- ggml sizes ---

GgmlTypeSize GgmlTypeSizeOf(uint32_t ggml_type) {
  const GgmlTypeInfo* type = FindGgmlType(ggml_type);
  if (type == nullptr) return {0, 0};
  return {type->block_size, type->type_size};
}

uint64_t GgmlTensorBytes(uint32_t ggml_type, absl::Span<const uint64_t> dims) {
  GgmlTypeSize t = GgmlTypeSizeOf(ggml_type);
  if (t.block_size == 0) return 0;
  // A zero dim makes the tensor empty whatever the others are; checking it
  // first keeps {2^40, 2^40, 0} from aborting on an irrelevant overflow.
  if (std::find(dims.begin(), dims.end(), uint64_t{0}) != dims.end()) return 0;
  uint64_t ne0 = dims.empty() ? 1 : dims[0];
  uint64_t bytes = Mul(ne0 / t.block_size, t.type_size);
  for (size_t i = 1; i < dims.size(); ++i) bytes = Mul(bytes, dims[i]);
  return bytes;
}

// --- GgufBuilder ---

GgufBuilder& GgufBuilder::set_version(uint32_t version) {
  version_ = version;
  return *this;
}
GgufBuilder& GgufBuilder::set_v1_layout(bool v1_layout) {
  v1_layout_ = v1_layout;
  return *this;
}
GgufBuilder& GgufBuilder::set_big_endian(bool big_endian) {
  big_endian_ = big_endian;
  return *this;
}
GgufBuilder& GgufBuilder::set_magic(std::string_view four_bytes) {
  if (four_bytes.size() != 4) Die("set_magic needs exactly 4 bytes");
  magic_ = std::string(four_bytes);
  return *this;
}
GgufBuilder& GgufBuilder::set_tensor_count(uint64_t count) {
  tensor_count_ = count;
  return *this;
}
GgufBuilder& GgufBuilder::set_kv_count(uint64_t count) {
  kv_count_ = count;
  return *this;
}
GgufBuilder& GgufBuilder::set_alignment(uint64_t alignment) {
  if (alignment == 0) Die("layout alignment must be non-zero");
  alignment_ = alignment;
  return *this;
}
GgufBuilder& GgufBuilder::set_pad_header(bool pad) {
  pad_header_ = pad;
  return *this;
}
GgufBuilder& GgufBuilder::set_pad_end(bool pad) {
  pad_end_ = pad;
  return *this;
}
GgufBuilder& GgufBuilder::set_omit_tensor_data(bool omit) {
  omit_tensor_data_ = omit;
  return *this;
}
GgufBuilder& GgufBuilder::set_truncate_to(uint64_t size) {
  truncate_to_ = size;
  return *this;
}
GgufBuilder& GgufBuilder::set_trailing_bytes(std::vector<uint8_t> bytes) {
  trailing_ = std::move(bytes);
  return *this;
}
GgufBuilder& GgufBuilder::set_default_fill(DataFill fill) {
  default_fill_ = fill;
  return *this;
}

GgufBuilder& GgufBuilder::AddKv(std::string key, GgufValue value) {
  kvs_.push_back(Kv{std::move(key), std::nullopt, std::move(value)});
  return *this;
}

GgufBuilder& GgufBuilder::AddKvWithKeyLength(std::string key, uint64_t declared_key_length,
                                             GgufValue value) {
  kvs_.push_back(Kv{std::move(key), declared_key_length, std::move(value)});
  return *this;
}

GgufBuilder& GgufBuilder::AddAlignmentKv(uint32_t alignment) {
  AddKv("general.alignment", GgufValue::U32(alignment));
  // Alignment 0 is a test of the validator, not a layout this writer can use.
  if (alignment != 0) alignment_ = alignment;
  return *this;
}

GgufBuilder& GgufBuilder::AddTensor(std::string name, std::vector<uint64_t> dims,
                                    uint32_t ggml_type, TensorOptions options) {
  tensors_.push_back(Tensor{std::move(name), std::move(dims), ggml_type, std::move(options)});
  return *this;
}

struct GgufBuilder::Plan {
  std::vector<uint8_t> header;  // magic through the last tensor info
  BuiltFile layout;             // bytes left empty
  uint64_t full_size = 0;       // before truncation
};

GgufBuilder::Plan GgufBuilder::MakePlan() const {
  Plan plan;
  BuiltFile& l = plan.layout;

  // Data sizes and relative positions first: the infos need the offsets.
  std::vector<uint64_t> relative(tensors_.size());
  uint64_t cursor = 0;
  for (size_t i = 0; i < tensors_.size(); ++i) {
    const Tensor& t = tensors_[i];
    uint64_t size;
    if (t.options.byte_size) {
      size = *t.options.byte_size;
    } else if (t.options.data) {
      size = t.options.data->size();
    } else {
      size = GgmlTensorBytes(t.ggml_type, t.dims);
    }
    relative[i] = cursor;
    l.tensor_sizes.push_back(size);
    cursor = Add(cursor, size);
    if (i + 1 < tensors_.size() || pad_end_) cursor = AlignUp(cursor, alignment_);
  }
  const uint64_t data_section_size = cursor;

  Encoder e(plan.header, big_endian_, v1_layout());
  e.Bytes(magic_);
  e.U32(version_);
  e.Len(tensor_count_.value_or(tensors_.size()));
  e.Len(kv_count_.value_or(kvs_.size()));
  for (const Kv& kv : kvs_) {
    l.kv_offsets.push_back(e.pos());
    e.String(kv.key, kv.declared_key_length);
    l.kv_value_offsets.push_back(e.pos());
    e.U32(kv.value.type_id);
    e.Payload(kv.value);
  }
  for (size_t i = 0; i < tensors_.size(); ++i) {
    const Tensor& t = tensors_[i];
    const std::vector<uint64_t>& dims = t.options.written_dims.value_or(t.dims);
    l.tensor_info_offsets.push_back(e.pos());
    e.String(t.name, t.options.declared_name_length);
    e.U32(t.options.n_dims.value_or(static_cast<uint32_t>(dims.size())));
    for (uint64_t d : dims) e.Len(d);
    e.U32(t.ggml_type);
    uint64_t offset = t.options.offset.value_or(relative[i]);
    e.Uint(offset, 8);  // u64 in every version
    l.tensor_relative_offsets.push_back(offset);
  }

  l.header_end = plan.header.size();
  l.data_offset = pad_header_.value_or(!tensors_.empty()) ? AlignUp(l.header_end, alignment_)
                                                          : l.header_end;
  for (uint64_t r : relative) l.tensor_data_offsets.push_back(Add(l.data_offset, r));
  plan.full_size = omit_tensor_data_ ? l.data_offset : Add(l.data_offset, data_section_size);
  plan.full_size = Add(plan.full_size, trailing_.size());
  l.file_size = plan.full_size;
  if (truncate_to_) {
    if (*truncate_to_ > plan.full_size) Die("set_truncate_to is past the end of the file");
    l.file_size = *truncate_to_;
  }
  return plan;
}

namespace {

// Writes plan-described bytes to a sink, cutting everything at `limit`.
class Emitter {
 public:
  Emitter(Sink& sink, uint64_t limit) : sink_(sink), limit_(limit) {}

  void Bytes(const uint8_t* p, uint64_t n) {
    n = Clip(n);
    sink_.Bytes(p, static_cast<size_t>(n));
    pos_ += n;
  }
  void Zeros(uint64_t n) {
    n = Clip(n);
    if (n > 0) sink_.Zeros(n);
    pos_ += n;
  }
  uint64_t pos() const { return pos_; }
  bool full() const { return pos_ >= limit_; }

 private:
  uint64_t Clip(uint64_t n) const { return std::min(n, limit_ - pos_); }
  Sink& sink_;
  uint64_t limit_;
  uint64_t pos_ = 0;
};

}  // namespace

// Shared by Build and WriteToFile so that the in-memory and on-disk files
// cannot drift apart.
void GgufBuilder::Emit(const Plan& plan, Sink& sink) const {
  const BuiltFile& l = plan.layout;
  Emitter out(sink, l.file_size);
  out.Bytes(plan.header.data(), plan.header.size());
  out.Zeros(l.data_offset - l.header_end);
  if (!omit_tensor_data_) {
    std::vector<uint8_t> chunk;
    for (size_t i = 0; i < tensors_.size() && !out.full(); ++i) {
      const Tensor& t = tensors_[i];
      out.Zeros(l.tensor_data_offsets[i] - out.pos());
      const uint64_t size = l.tensor_sizes[i];
      const std::vector<uint8_t>* given = t.options.data ? &*t.options.data : nullptr;
      const DataFill fill = t.options.fill.value_or(default_fill_);
      if (given == nullptr && fill == DataFill::kZeros) {
        out.Zeros(size);
        continue;
      }
      // Data is defined as little-endian elements; a big-endian file stores
      // each element of a plain (block size 1) type reversed. Quantized
      // blocks are written as given: their inner fields are not modelled.
      GgmlTypeSize ts = GgmlTypeSizeOf(t.ggml_type);
      const size_t element = (big_endian_ && ts.block_size == 1) ? ts.type_size : 1;
      // 64 KiB is a multiple of every element size, so chunks never split one.
      constexpr uint64_t kChunk = 64 * 1024;
      for (uint64_t done = 0; done < size && !out.full(); done += kChunk) {
        const uint64_t n = std::min(kChunk, size - done);
        chunk.assign(static_cast<size_t>(n), 0);
        for (uint64_t k = 0; k < n; ++k) {
          const uint64_t p = done + k;
          if (given != nullptr) {
            chunk[k] = p < given->size() ? (*given)[p] : 0;
          } else {
            chunk[k] = PatternByte(i, p);
          }
        }
        if (element > 1) {
          for (size_t k = 0; k + element <= chunk.size(); k += element) {
            std::reverse(chunk.begin() + k, chunk.begin() + k + element);
          }
        }
        out.Bytes(chunk.data(), chunk.size());
      }
    }
    // End padding: tensor_data_offsets and sizes fix where the section ends.
    out.Zeros(plan.full_size - trailing_.size() - out.pos());
  }
  out.Bytes(trailing_.data(), trailing_.size());
}

BuiltFile GgufBuilder::Build() const {
  Plan plan = MakePlan();
  BuiltFile file = plan.layout;
  file.bytes.reserve(static_cast<size_t>(file.file_size));
  MemorySink sink(file.bytes);
  Emit(plan, sink);
  if (file.bytes.size() != file.file_size) Die("internal: built size differs from the plan");
  return file;
}

BuiltFile GgufBuilder::Layout() const { return MakePlan().layout; }

absl::Status GgufBuilder::WriteToFile(const std::string& path, bool sparse_data) const {
  Plan plan = MakePlan();
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    return absl::InternalError(absl::StrCat("open ", path, ": ", std::strerror(errno)));
  }
  FileSink sink(fd, sparse_data);
  Emit(plan, sink);
  sink.Flush();
  // Skipped zeros at the end leave the file short until its size is set.
  if (sink.error().empty() && ftruncate(fd, static_cast<off_t>(plan.layout.file_size)) != 0) {
    sink.Fail("ftruncate");
  }
  std::string error = sink.error();
  if (close(fd) != 0 && error.empty()) error = absl::StrCat("close: ", std::strerror(errno));
  if (!error.empty()) return absl::InternalError(absl::StrCat(path, ": ", error));
  return absl::OkStatus();
}

// --- byte patches ---

namespace {
void CheckRange(uint64_t size, uint64_t offset, uint64_t n) {
  if (offset > size || size - offset < n) Die("byte patch or read past the end");
}
}  // namespace

void PutU8(std::vector<uint8_t>& bytes, uint64_t offset, uint8_t v) {
  CheckRange(bytes.size(), offset, 1);
  bytes[offset] = v;
}

void PutU32LE(std::vector<uint8_t>& bytes, uint64_t offset, uint32_t v) {
  CheckRange(bytes.size(), offset, 4);
  for (int i = 0; i < 4; ++i) bytes[offset + i] = static_cast<uint8_t>(v >> (8 * i));
}

void PutU64LE(std::vector<uint8_t>& bytes, uint64_t offset, uint64_t v) {
  CheckRange(bytes.size(), offset, 8);
  for (int i = 0; i < 8; ++i) bytes[offset + i] = static_cast<uint8_t>(v >> (8 * i));
}

uint32_t GetU32LE(absl::Span<const uint8_t> bytes, uint64_t offset) {
  CheckRange(bytes.size(), offset, 4);
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(bytes[offset + i]) << (8 * i);
  return v;
}

uint64_t GetU64LE(absl::Span<const uint8_t> bytes, uint64_t offset) {
  CheckRange(bytes.size(), offset, 8);
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(bytes[offset + i]) << (8 * i);
  return v;
}

}  // namespace ggufguard::testing
