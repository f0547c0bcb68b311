#pragma once
// GzipInflater: inflates an in-memory gzip file a piece at a time, so that its reader
// decides how much output to ask for (and to allocate) from what it has read so far:
//
//   GzipInflater gz(stored.data(), stored.size(), path, "read_idx");
//   uint8_t header[16];
//   size_t n = gz.read(header, sizeof header);   // fewer than 16 only at the end of the data
//
// Concatenated members are one stream, as gzip defines it; zlib checks each member's CRC-32
// and length trailer, so corruption cannot pass silently. Errors name `op` and the file: a
// corrupt or truncated stream, garbage after it, input over 4 GiB.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

struct z_stream_s;  // zlib's stream state (zlib.h stays out of this header)

namespace ember::data {

class GzipInflater {
 public:
  GzipInflater(const uint8_t* data, size_t size, std::string name, const char* op);
  ~GzipInflater();
  GzipInflater(const GzipInflater&) = delete;
  GzipInflater& operator=(const GzipInflater&) = delete;

  // Inflates up to n bytes into out; returns how many, fewer than n only at the end.
  size_t read(uint8_t* out, size_t n);

 private:
  [[noreturn]] void fail(const std::string& problem) const;

  std::unique_ptr<z_stream_s> zs_;
  std::string name_;
  const char* op_;
  bool finished_ = false;
};

// True when `data` starts with the gzip magic bytes 1f 8b.
bool is_gzip(const uint8_t* data, size_t size);

}  // namespace ember::data
