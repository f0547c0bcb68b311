// A disk that fills up during a save: the error names the file, the last good file
// stays whole and loadable, and no temporary file is left behind. The full disk is a
// file-size limit (RLIMIT_FSIZE, SIGXFSZ ignored: write() then fails with EFBIG) set
// in a child process, so the test needs no special file system.
#include <csignal>
#include <cstring>
#include <filesystem>
#include <string>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "data/safetensors.h"
#include "kernels/factories.h"
#include "tests/data/temp_dir.h"
#include "tests/support/expect.h"

using namespace ember;

namespace {

// Runs `save` in a child process whose files may not grow past `limit_bytes`; returns what the
// child's ember::Error said ("" if the save succeeded, "crash" if the child died).
std::string save_with_file_size_limit(rlim_t limit_bytes, const std::function<void()>& save) {
  int pipe_fds[2];
  REQUIRE(::pipe(pipe_fds) == 0);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    ::close(pipe_fds[0]);
    std::signal(SIGXFSZ, SIG_IGN);
    const rlimit limit{limit_bytes, limit_bytes};
    ::setrlimit(RLIMIT_FSIZE, &limit);
    std::string message;
    try {
      save();
    } catch (const Error& e) {
      message = e.what();
    }
    if (!message.empty() && ::write(pipe_fds[1], message.data(), message.size()) < 0) _exit(3);
    _exit(0);
  }
  ::close(pipe_fds[1]);
  std::string message;
  char buffer[512];
  for (ssize_t n; (n = ::read(pipe_fds[0], buffer, sizeof buffer)) > 0;) message.append(buffer, static_cast<size_t>(n));
  ::close(pipe_fds[0]);
  int status = 0;
  ::waitpid(child, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return "crash";
  return message;
}

}  // namespace

TEST_CASE("a save that runs out of disk names the file and keeps the last good one", "[data]") {
  test::TempDir dir;
  const std::string path = dir.file("model.safetensors");
  const Tensor small = full({16}, 1.0);
  data::save_safetensors(path, {{"w", small}});

  const Tensor big = full({64 * 1024}, 2.0);  // 256 KiB: past the 64 KiB the child may write
  const std::string message =
      save_with_file_size_limit(64 * 1024, [&] { data::save_safetensors(path, {{"w", big}}); });
  INFO("the child said: " << message);
  CHECK(message.find("model.safetensors.tmp") != std::string::npos);
  CHECK(message.find("writing") != std::string::npos);
  CHECK(message.find(std::strerror(EFBIG)) != std::string::npos);

  const std::map<std::string, Tensor> loaded = data::load_safetensors(path);
  REQUIRE(loaded.count("w"));
  test::expect_close(loaded.at("w"), small, 0.0, "the last good file");
  CHECK_FALSE(std::filesystem::exists(path + ".tmp"));
}
