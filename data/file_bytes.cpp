#include "data/file_bytes.h"

#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sys/stat.h>

#include "core/error.h"

namespace ember::data {
namespace {

constexpr size_t kInflateChunkBytes = size_t{1} << 20;

bool is_gzip(const std::vector<uint8_t>& bytes) {
  return bytes.size() >= 2 && bytes[0] == 0x1f && bytes[1] == 0x8b;
}

// Inflates every gzip member (concatenated members are valid gzip). zlib checks
// each member's CRC-32 and length trailer, so corruption cannot pass silently.
std::vector<uint8_t> gunzip(const std::vector<uint8_t>& in, const std::string& path, const char* op) {
  z_stream zs{};
  // 16 + MAX_WBITS: expect a gzip wrapper (header and CRC trailer).
  EMBER_CHECK(inflateInit2(&zs, 16 + MAX_WBITS) == Z_OK, op << ": " << path << ": zlib inflateInit2 failed");
  EMBER_CHECK(in.size() <= 0xffffffffu, op << ": " << path << ": gzip files over 4 GiB are not supported");
  std::vector<uint8_t> out;
  zs.next_in = const_cast<Bytef*>(in.data());
  zs.avail_in = static_cast<uInt>(in.size());
  int status = Z_OK;
  for (;;) {
    const size_t used = out.size();
    out.resize(used + kInflateChunkBytes);
    zs.next_out = out.data() + used;
    zs.avail_out = static_cast<uInt>(kInflateChunkBytes);
    status = inflate(&zs, Z_NO_FLUSH);
    out.resize(out.size() - zs.avail_out);
    if (status == Z_STREAM_END) {
      if (zs.avail_in == 0) break;
      if (zs.avail_in >= 2 && zs.next_in[0] == 0x1f && zs.next_in[1] == 0x8b) {
        inflateReset(&zs);  // another gzip member follows
        continue;
      }
      const uInt trailing = zs.avail_in;
      inflateEnd(&zs);
      EMBER_THROW(op << ": " << path << ": corrupt gzip file: " << trailing << " bytes of garbage after the gzip stream");
    }
    if (status == Z_OK) continue;
    // Z_BUF_ERROR with input exhausted: the stream ended early.
    const bool truncated = status == Z_BUF_ERROR && zs.avail_in == 0;
    const std::string detail = zs.msg != nullptr ? zs.msg : "zlib error " + std::to_string(status);
    inflateEnd(&zs);
    if (truncated) EMBER_THROW(op << ": " << path << ": truncated gzip file (the compressed stream ends early)");
    EMBER_THROW(op << ": " << path << ": corrupt gzip file (" << detail << ")");
  }
  inflateEnd(&zs);
  return out;
}

}  // namespace

bool checked_byte_count(const std::vector<int64_t>& sizes, uint64_t unit, uint64_t* bytes) {
  for (int64_t s : sizes)
    if (s == 0) return *bytes = 0, true;
  uint64_t total = unit;
  for (int64_t s : sizes) {
    const auto size = static_cast<uint64_t>(s);
    if (total > UINT64_MAX / size) return false;
    total *= size;
  }
  *bytes = total;
  return true;
}

bool file_exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::vector<uint8_t> read_raw_file_bytes(const std::string& path, const char* op) {
  struct stat st {};
  EMBER_CHECK(::stat(path.c_str(), &st) == 0, op << ": cannot open " << path << " (" << std::strerror(errno) << ")");
  EMBER_CHECK(S_ISREG(st.st_mode), op << ": " << path << " is not a regular file");
  std::ifstream file(path, std::ios::binary | std::ios::ate);
  EMBER_CHECK(file.is_open(), op << ": cannot open " << path << " (" << std::strerror(errno) << ")");
  const std::streamoff size = file.tellg();
  EMBER_CHECK(size >= 0, op << ": cannot read the size of " << path);
  std::vector<uint8_t> bytes(static_cast<size_t>(size));
  file.seekg(0);
  if (size > 0) file.read(reinterpret_cast<char*>(bytes.data()), size);
  EMBER_CHECK(file.good() || (size == 0 && !file.bad()), op << ": error reading " << path);
  return bytes;
}

std::vector<uint8_t> read_file_bytes(const std::string& path, const char* op) {
  std::vector<uint8_t> bytes = read_raw_file_bytes(path, op);
  return is_gzip(bytes) ? gunzip(bytes, path, op) : bytes;
}

std::string find_file(const std::string& folder, const std::vector<std::string>& candidates, const char* op) {
  std::string tried;
  for (const std::string& name : candidates) {
    const std::string path = folder + "/" + name;
    if (file_exists(path)) return path;
    tried += (tried.empty() ? "" : ", ") + name;
  }
  EMBER_THROW(op << ": none of " << tried << " found in " << folder);
}

}  // namespace ember::data
