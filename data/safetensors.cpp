// Writing safetensors files; the reader is in safetensors_load.cpp.
#include "data/safetensors.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <set>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "core/error.h"

namespace ember::data {
namespace {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "safetensors stores little-endian data; ember writes raw bytes");

constexpr size_t kHeaderAlignBytes = 8;

// The tensors as CPU tensors, checked: defined, named, names unique.
NamedTensors host_tensors(const NamedTensors& tensors, const std::string& where) {
  NamedTensors host;
  std::set<std::string> seen;
  for (const auto& [name, tensor] : tensors) {
    EMBER_CHECK(!name.empty(), where << ": a tensor has an empty name");
    EMBER_CHECK(name != "__metadata__", where << ": \"__metadata__\" is reserved and cannot name a tensor");
    EMBER_CHECK(seen.insert(name).second, where << ": tensor name '" << name << "' appears twice");
    EMBER_CHECK(tensor.defined(), where << ": tensor '" << name << "' is undefined");
    host.emplace_back(name, tensor.device().is_cpu() ? tensor.detach() : tensor.detach().to(kCPU));
  }
  return host;
}

std::string header_bytes(const NamedTensors& host, const SafetensorsMetadata& metadata, const std::string& where) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  uint64_t offset = 0;
  for (const auto& [name, tensor] : host) {
    nlohmann::ordered_json entry;
    entry["dtype"] = safetensors_dtype_name(tensor.dtype());
    entry["shape"] = tensor.sizes();
    entry["data_offsets"] = {offset, offset + tensor.nbytes()};
    header[name] = std::move(entry);
    offset += tensor.nbytes();
  }
  std::string json;
  try {
    json = header.dump();
  } catch (const nlohmann::json::exception& e) {
    EMBER_THROW(where << ": a tensor name or metadata string is not valid UTF-8 (" << e.what() << ")");
  }
  // Spaces after the JSON so the data starts 8-byte aligned (the spec's padding).
  json.append((kHeaderAlignBytes - json.size() % kHeaderAlignBytes) % kHeaderAlignBytes, ' ');
  std::string bytes(kSafetensorsLengthBytes, '\0');
  for (size_t i = 0; i < kSafetensorsLengthBytes; ++i)
    bytes[i] = static_cast<char>((static_cast<uint64_t>(json.size()) >> (8 * i)) & 0xff);
  return bytes + json;
}

// Closes the file descriptor and removes the temporary file unless release()d.
class TempFile {
 public:
  TempFile(std::string path, const std::string& where) : path_(std::move(path)) {
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    EMBER_CHECK(fd_ >= 0, where << ": cannot create " << path_ << " (" << std::strerror(errno) << ")");
  }
  ~TempFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!path_.empty()) ::unlink(path_.c_str());
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;

  void write(const void* data, size_t bytes, const std::string& where) {
    const char* p = static_cast<const char*>(data);
    while (bytes > 0) {
      const ssize_t n = ::write(fd_, p, bytes);
      if (n < 0 && errno == EINTR) continue;
      EMBER_CHECK(n > 0, where << ": writing " << path_ << " failed (" << std::strerror(errno) << ")");
      p += n;
      bytes -= static_cast<size_t>(n);
    }
  }
  // fsync + close, then rename over `target`: the new file appears whole or not at all.
  void commit(const std::string& target, const std::string& where) {
    EMBER_CHECK(::fsync(fd_) == 0, where << ": fsync of " << path_ << " failed (" << std::strerror(errno) << ")");
    const int fd = fd_;
    fd_ = -1;
    EMBER_CHECK(::close(fd) == 0, where << ": closing " << path_ << " failed (" << std::strerror(errno) << ")");
    EMBER_CHECK(::rename(path_.c_str(), target.c_str()) == 0,
                where << ": renaming " << path_ << " to " << target << " failed (" << std::strerror(errno) << ")");
    path_.clear();
  }

 private:
  std::string path_;
  int fd_ = -1;
};

// Makes the rename durable; best effort (some file systems refuse to fsync a directory).
void sync_parent_directory(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

const char* safetensors_dtype_name(DType dtype) {
  switch (dtype) {
    case DType::f32: return "F32";
    case DType::f16: return "F16";
    case DType::f64: return "F64";
    case DType::i64: return "I64";
    case DType::u8: return "U8";
  }
  EMBER_THROW("safetensors: dtype " << static_cast<int>(dtype) << " has no safetensors name");
}

std::string safetensors_header(const NamedTensors& tensors, const SafetensorsMetadata& metadata) {
  return header_bytes(host_tensors(tensors, "safetensors_header"), metadata, "safetensors_header");
}

void save_safetensors(const std::string& path, const NamedTensors& tensors, const SafetensorsMetadata& metadata) {
  const std::string where = "save_safetensors: " + path;
  // Everything that can fail on bad input fails here, before any file is touched.
  const NamedTensors host = host_tensors(tensors, where);
  const std::string header = header_bytes(host, metadata, where);
  TempFile file(path + ".tmp", where);
  file.write(header.data(), header.size(), where);
  for (const auto& entry : host) file.write(entry.second.data_ptr(), entry.second.nbytes(), where);
  file.commit(path, where);
  sync_parent_directory(path);
}

}  // namespace ember::data
