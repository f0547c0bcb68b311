// Two of the memory lab's experiments, run for real into a temporary folder: their tables
// come from the run and their claims hold.
#include <catch2/catch.hpp>
#include <filesystem>

#include "apps/lab_experiments.h"
#include "tests/data/temp_dir.h"

using namespace ember::apps;

TEST_CASE("the lab's cached-memory experiment ends with nothing reserved", "[lab]") {
  ember::test::TempDir dir;
  const std::string md = lab_releasing_memory({dir.path(), 1, "", 64});
  CHECK(md.find("| 7 | empty_cache(): cached segments returned to the system | 0.00 | 0.00 |") != std::string::npos);
  // Dropping a tensor whose alias lives frees nothing: rows 3 and 4 show the same bytes.
  const auto row = [&](int n) {
    const size_t at = md.find("| " + std::to_string(n) + " | ");
    REQUIRE(at != std::string::npos);
    const std::string line = md.substr(at, md.find('\n', at) - at);
    return line.substr(line.rfind(" | ", line.rfind(" | ") - 1));  // "allocated | reserved |"
  };
  CHECK(row(3) == row(4));
  CHECK(row(5) != row(4));
  CHECK(std::filesystem::file_size(dir.file("releasing-memory.svg")) > 500);
}

TEST_CASE("the lab's batch-size experiment finds the largest batch that really fits", "[lab]") {
  ember::test::TempDir dir;
  const std::string md = lab_batch_size({dir.path(), 1, "", 48});
  // The planner's batch ran under the limit and the next one did not.
  CHECK(md.find(" ran; at batch ") != std::string::npos);
  CHECK(md.find("it ran out of memory.") != std::string::npos);
  CHECK(md.find("r^2 1.0000") != std::string::npos);  // activations are linear in the batch
  CHECK(std::filesystem::file_size(dir.file("batch-size.svg")) > 500);
}
