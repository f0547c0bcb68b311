// dist/same_on_all_ranks.h: options that differ between ranks are refused on every rank, naming the
// option and each rank's value.
#include <catch2/catch.hpp>

#include <string>

#include "dist/same_on_all_ranks.h"
#include "dist/single_process_group.h"

using namespace ember::dist;
using Catch::Matchers::Contains;

TEST_CASE("check_same_on_all_ranks: equal options pass", "[dist]") {
  check_same_on_all_ranks({{"--batch", "64"}, {"--model", "convnet"}, {"--note", ""}, {"--long", std::string(300, 'x')}});
  check_same_on_all_ranks("--lr", "0.1");
  check_same_on_all_ranks(NamedValues{});
  SingleProcessGroup one;
  check_same_on_all_ranks("--batch", std::to_string(world().rank()), one);  // one rank: nothing to disagree with
}

TEST_CASE("check_same_on_all_ranks: a value that differs is refused on every rank, naming it", "[dist]") {
  ProcessGroup& group = world();
  const int n = group.size(), r = group.rank();
  if (n == 1) {
    check_same_on_all_ranks("--batch", "64");
    return;  // one rank cannot disagree: the mpiexec runs test the refusal
  }
  // Rank 0 says 64, the others 32 (and 16 on rank 2).
  const std::string batch = r == 0 ? "64" : r == 1 ? "32" : "16";
  const std::string expected = n == 2 ? "--batch is 64 on rank 0 and 32 on rank 1"
                                      : "--batch is 64 on rank 0, 32 on rank 1 and 16 on rank 2";
  CHECK_THROWS_WITH(check_same_on_all_ranks({{"--model", "convnet"}, {"--batch", batch}}),
                    Contains("dist: the ranks were not given the same options: " + expected +
                             " (every rank must be started with the same options)"));

  // Two ranks agreeing against a third, and an option one rank lacks.
  ember::dist::NamedValues options = {{"--precision", r == 1 ? "fp16" : "fp32"}};
  if (r != 0) options.push_back({"--accum", "4"});
  const std::string precision = n == 2 ? "--precision is fp32 on rank 0 and fp16 on rank 1"
                                       : "--precision is fp32 on ranks 0 and 2 and fp16 on rank 1";
  const std::string accum = n == 2 ? "--accum is not given on rank 0 and 4 on rank 1"
                                   : "--accum is not given on rank 0 and 4 on ranks 1 and 2";
  CHECK_THROWS_WITH(check_same_on_all_ranks(options), Contains(precision + "; " + accum));
}
