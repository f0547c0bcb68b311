#include "data/file_bytes.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sys/stat.h>

#include "core/bad_alloc_error.h"
#include "core/error.h"
#include "data/byte_stream.h"

namespace ember::data {

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
  std::vector<uint8_t> bytes = with_bad_alloc_as_error(std::string(op) + ": " + path, [&] {
    return std::vector<uint8_t>(static_cast<size_t>(size));
  });
  file.seekg(0);
  if (size > 0) file.read(reinterpret_cast<char*>(bytes.data()), size);
  EMBER_CHECK(file.good() || (size == 0 && !file.bad()), op << ": error reading " << path);
  return bytes;
}

std::vector<uint8_t> decode_file_bytes(std::vector<uint8_t> stored, const std::string& name, const char* op,
                                       uint64_t max_bytes) {
  return with_bad_alloc_as_error(std::string(op) + ": " + name, [&] {
    ByteStream in(stored.data(), stored.size(), name, op);
    if (!in.compressed()) {
      EMBER_CHECK(stored.size() <= max_bytes, op << ": " << name << ": " << stored.size()
                                                 << " bytes, more than the limit of " << max_bytes << " bytes");
      return std::move(stored);
    }
    std::vector<uint8_t> bytes = in.read_up_to(max_bytes);
    const uint64_t more = in.count_rest(0);
    EMBER_CHECK(more == 0, op << ": " << name << ": inflates to more than the limit of " << max_bytes
                              << " bytes (stopped there)");
    return bytes;
  });
}

std::vector<uint8_t> read_file_bytes(const std::string& path, const char* op, uint64_t max_bytes) {
  return decode_file_bytes(read_raw_file_bytes(path, op), path, op, max_bytes);
}

std::string find_file(const std::string& folder, const std::vector<std::string>& candidates, const char* op) {
  struct stat st {};
  EMBER_CHECK(::stat(folder.c_str(), &st) == 0 && S_ISDIR(st.st_mode),
              op << ": the folder " << folder << (::stat(folder.c_str(), &st) == 0 ? " is not a folder" : " does not exist"));
  std::string tried;
  for (const std::string& name : candidates) {
    const std::string path = folder + "/" + name;
    if (file_exists(path)) return path;
    tried += (tried.empty() ? "" : ", ") + name;
  }
  EMBER_THROW(op << ": none of " << tried << " found in " << folder);
}

}  // namespace ember::data
