#pragma once
// The file readers' tests (IDX, CIFAR-10, safetensors) as a Catch2 fixture: a temporary
// folder per test case, small files written into it (plain or gzipped), and the check those
// tests all make, that a bad file's error names the file and what in it is wrong.
//
//   TEST_CASE_METHOD(ember::test::ReaderFixture, "IDX errors name the file", "[data]") {
//     const std::string p = file("bad");
//     expect_read_error(p, {0, 0}, read_idx_images, {"too short"});  // writes p, reads it, expects p and "too short"
//     CHECK(read_idx_images(write_gzip_file(file("ok.gz"), idx)).numel() == 6);
//   }
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tests/data/temp_dir.h"
#include "tests/support/gzip_bytes.h"
#include "tests/support/expect.h"

namespace ember::test {

// A reader under test, given the path of the file it reads.
using ReadFile = std::function<void(const std::string& path)>;

class ReaderFixture {
 protected:
  TempDir dir;  // the test case's folder, removed after it

  // The path of `name` in dir.
  std::string file(const std::string& name) const { return dir.file(name); }

  // Writes `bytes` (gzipped by write_gzip_file) to `path` and returns the path.
  static std::string write_file(const std::string& path, const std::vector<uint8_t>& bytes) {
    write_bytes(path, bytes);
    return path;
  }
  static std::string write_gzip_file(const std::string& path, const std::vector<uint8_t>& bytes) {
    return write_file(path, gzip_bytes(bytes));
  }

  // Writes `bytes` to `path`, reads it with `read` and expects an ember::Error that names the
  // path and contains every fragment (the field at fault, the sizes, the limit).
  static void expect_read_error(const std::string& path, const std::vector<uint8_t>& bytes, const ReadFile& read,
                                std::vector<std::string> fragments) {
    write_bytes(path, bytes);
    fragments.insert(fragments.begin(), path);
    expect_error_contains([&] { read(path); }, fragments);
  }
};

}  // namespace ember::test
