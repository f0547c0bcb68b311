#include "data/byte_stream.h"

#include <algorithm>
#include <cstring>

namespace ember::data {
namespace {

// Inflated output grows by chunks that double from 64 KiB to 16 MiB: few zlib calls,
// and memory that follows the bytes that really arrive.
constexpr size_t kFirstChunkBytes = size_t{64} << 10;
constexpr size_t kLargestChunkBytes = size_t{16} << 20;

}  // namespace

ByteStream::ByteStream(const uint8_t* data, size_t size, const std::string& name, const char* op)
    : data_(data), size_(size) {
  if (is_gzip(data, size)) gzip_ = std::make_unique<GzipInflater>(data, size, name, op);
}

size_t ByteStream::read(uint8_t* out, size_t n) {
  if (gzip_) return gzip_->read(out, n);
  n = std::min(n, size_ - at_);
  if (n > 0) std::memcpy(out, data_ + at_, n);
  at_ += n;
  return n;
}

std::vector<uint8_t> ByteStream::read_up_to(uint64_t max_bytes) {
  std::vector<uint8_t> out;
  if (!gzip_) {
    out.resize(static_cast<size_t>(std::min<uint64_t>(max_bytes, size_ - at_)));
    read(out.data(), out.size());
    return out;
  }
  size_t chunk = kFirstChunkBytes;
  while (out.size() < max_bytes) {
    const size_t used = out.size();
    const auto want = static_cast<size_t>(std::min<uint64_t>(chunk, max_bytes - used));
    out.resize(used + want);
    const size_t got = gzip_->read(out.data() + used, want);
    out.resize(used + got);
    if (got < want) break;
    chunk = std::min(chunk * 2, kLargestChunkBytes);
  }
  return out;
}

uint64_t ByteStream::count_rest(uint64_t max_inflated) {
  if (!gzip_) {
    const size_t left = size_ - at_;
    at_ = size_;
    return left;
  }
  std::vector<uint8_t> scratch(kFirstChunkBytes);
  uint64_t counted = 0;
  while (counted <= max_inflated) {
    const auto want = static_cast<size_t>(std::min<uint64_t>(scratch.size(), max_inflated + 1 - counted));
    const size_t got = gzip_->read(scratch.data(), want);
    counted += got;
    if (got < want) break;
  }
  return counted;
}

}  // namespace ember::data
