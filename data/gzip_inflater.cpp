#include "data/gzip_inflater.h"

#include <zlib.h>

#include <algorithm>
#include <climits>
#include <new>

#include "core/error.h"

namespace ember::data {

bool is_gzip(const uint8_t* data, size_t size) { return size >= 2 && data[0] == 0x1f && data[1] == 0x8b; }

GzipInflater::GzipInflater(const uint8_t* data, size_t size, std::string name, const char* op)
    : zs_(std::make_unique<z_stream_s>()), name_(std::move(name)), op_(op) {
  if (size > UINT_MAX) fail("gzip files over 4 GiB are not supported");
  // 16 + MAX_WBITS: expect a gzip wrapper (header and CRC trailer).
  if (inflateInit2(zs_.get(), 16 + MAX_WBITS) != Z_OK) fail("zlib inflateInit2 failed");
  zs_->next_in = const_cast<Bytef*>(data);
  zs_->avail_in = static_cast<uInt>(size);
}

GzipInflater::~GzipInflater() { inflateEnd(zs_.get()); }

void GzipInflater::fail(const std::string& problem) const { EMBER_THROW(op_ << ": " << name_ << ": " << problem); }

size_t GzipInflater::read(uint8_t* out, size_t n) {
  size_t produced = 0;
  while (produced < n && !finished_) {
    const auto ask = static_cast<uInt>(std::min<size_t>(n - produced, UINT_MAX));
    zs_->next_out = out + produced;
    zs_->avail_out = ask;
    const int status = inflate(zs_.get(), Z_NO_FLUSH);
    produced += ask - zs_->avail_out;
    if (status == Z_OK) continue;
    if (status == Z_MEM_ERROR) throw std::bad_alloc();  // the reader's boundary words it (core/bad_alloc_error.h)
    if (status == Z_STREAM_END) {
      if (zs_->avail_in == 0) {
        finished_ = true;
      } else if (is_gzip(zs_->next_in, zs_->avail_in)) {
        inflateReset(zs_.get());  // another gzip member follows
      } else {
        fail("corrupt gzip file: " + std::to_string(zs_->avail_in) + " bytes of garbage after the gzip stream");
      }
      continue;
    }
    // Z_BUF_ERROR with the input used up (never for want of output: avail_out > 0): the stream ends early.
    if (status == Z_BUF_ERROR && zs_->avail_in == 0) fail("truncated gzip file (the compressed stream ends early)");
    fail("corrupt gzip file (" + (zs_->msg != nullptr ? std::string(zs_->msg) : "zlib error " + std::to_string(status)) +
         ")");
  }
  return produced;
}

}  // namespace ember::data
