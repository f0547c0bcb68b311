#pragma once
// ByteStream: a file's stored bytes, read in order and inflated on the way when they start
// with the gzip magic bytes (1f 8b), so "x.gz" and "x" read the same way and a reader can
// check a header before it asks for (and allocates) what the header declares:
//
//   ByteStream in(stored.data(), stored.size(), path, "read_idx");
//   uint8_t magic[4];
//   if (in.read(magic, 4) < 4) ...                          // fewer bytes only at the end
//   std::vector<uint8_t> values = in.read_up_to(declared);  // grows with what arrives, not with `declared`
//   uint64_t trailing = in.count_rest(1 << 20);             // what is left (a gzip stream: inflated 1 MiB more at most)
//
// The stored bytes must outlive the stream. Gzip errors name `op` and the file (data/gzip_inflater.h).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "data/gzip_inflater.h"

namespace ember::data {

class ByteStream {
 public:
  ByteStream(const uint8_t* data, size_t size, const std::string& name, const char* op);

  bool compressed() const { return gzip_ != nullptr; }
  // Copies up to n bytes into out; returns how many, fewer than n only at the end.
  size_t read(uint8_t* out, size_t n);
  // The next bytes up to the end or max_bytes, whichever comes first.
  std::vector<uint8_t> read_up_to(uint64_t max_bytes);
  // How many bytes are left, consuming them: exact for plain bytes; a gzip stream is
  // inflated (into a small scratch buffer) until its end or max_inflated + 1 bytes.
  uint64_t count_rest(uint64_t max_inflated);

 private:
  const uint8_t* data_;
  size_t size_;
  size_t at_ = 0;                         // plain bytes: the next one to read
  std::unique_ptr<GzipInflater> gzip_;   // null for plain bytes
};

}  // namespace ember::data
