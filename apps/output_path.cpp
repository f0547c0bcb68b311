#include "apps/output_path.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>

#include <unistd.h>

#include "core/error.h"

namespace ember::apps {

void check_writable(const std::string& path, const char* flag) {
  if (path.empty()) return;
  namespace fs = std::filesystem;
  const fs::path target(path);
  const fs::path folder = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::error_code ec;
  EMBER_CHECK(fs::is_directory(folder, ec),
              flag << " '" << path << "': the folder '" << folder.string() << "' does not exist");
  if (fs::exists(target, ec)) {
    EMBER_CHECK(!fs::is_directory(target, ec), flag << " '" << path << "' is a folder; give a file name");
    EMBER_CHECK(::access(path.c_str(), W_OK) == 0,
                flag << " '" << path << "' exists and cannot be overwritten (" << std::strerror(errno) << ")");
  }
  const std::string scratch = path + ".write-check";
  std::FILE* f = std::fopen(scratch.c_str(), "wb");
  EMBER_CHECK(f != nullptr, flag << " '" << path << "': cannot create files in '" << folder.string() << "' ("
                                 << std::strerror(errno) << ")");
  std::fclose(f);
  std::remove(scratch.c_str());
}

}  // namespace ember::apps
