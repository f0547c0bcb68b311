#pragma once
// gzip_bytes: a buffer gzipped in memory (one member, zlib's default level), for the tests
// and fuzz targets that need .gz input:
//
//   ember::test::write_bytes(dir.file("x.gz"), ember::test::gzip_bytes(idx));
#include <zlib.h>

#include <cstdint>
#include <stdexcept>
#include <vector>

namespace ember::test {

inline std::vector<uint8_t> gzip_bytes(const std::vector<uint8_t>& in) {
  z_stream zs{};
  // 16 + MAX_WBITS: write a gzip wrapper (header and CRC trailer); 8: zlib's default memLevel.
  if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw std::runtime_error("gzip_bytes: deflateInit2 failed");
  std::vector<uint8_t> out(deflateBound(&zs, static_cast<uLong>(in.size())));
  zs.next_in = const_cast<Bytef*>(in.data());
  zs.avail_in = static_cast<uInt>(in.size());
  zs.next_out = out.data();
  zs.avail_out = static_cast<uInt>(out.size());
  const int status = deflate(&zs, Z_FINISH);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  if (status != Z_STREAM_END) throw std::runtime_error("gzip_bytes: deflate failed");
  return out;
}

}  // namespace ember::test
