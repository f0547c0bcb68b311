// --threads against the CPU cores (apps/thread_count.h): a warning past the cores, a refusal
// past kMaxThreadsPerCore per core, nothing for the counts the suite and scripts use.
#include <string>
#include <thread>

#include "apps/thread_count.h"
#include "tests/support/expect.h"

using namespace ember::apps;

TEST_CASE("ember --threads up to the cores says nothing", "[cli]") {
  for (int cores : {1, 2, 16}) {
    for (int64_t threads = 1; threads <= cores; ++threads) {
      const ThreadCountCheck check = check_thread_count(threads, cores);
      CHECK(check.warning.empty());
      CHECK(check.error.empty());
    }
  }
}

TEST_CASE("ember --threads beyond the cores warns, naming both numbers", "[cli]") {
  const ThreadCountCheck check = check_thread_count(3, 2);
  CHECK(check.error.empty());
  CHECK(check.warning ==
        "ember: warning: --threads 3 is more than the 2 CPU cores this process may use; "
        "threads beyond that share cores and slow every step");
  // What the suite's --threads 2 gets on a 1-core machine: a warning, never an error.
  const ThreadCountCheck one_core = check_thread_count(2, 1);
  CHECK(one_core.error.empty());
  CHECK(one_core.warning.find("--threads 2 is more than the 1 CPU core this process") != std::string::npos);
  // The last count before the refusal still only warns.
  CHECK(check_thread_count(kMaxThreadsPerCore * 2, 2).error.empty());
}

TEST_CASE("ember --threads past 64 per core is refused, naming the bound and the cores", "[cli]") {
  const ThreadCountCheck check = check_thread_count(2 * kMaxThreadsPerCore + 1, 2);
  CHECK(check.error == "must be at most 128 (64 per CPU core, and this process may use 2), got 129");
  CHECK(check.warning.empty());  // one message, not two
  CHECK_FALSE(check_thread_count(100000, 2).error.empty());
}

TEST_CASE("usable_cpu_cores counts at least one core and no more than are online", "[cli]") {
  const int cores = usable_cpu_cores();
  CHECK(cores >= 1);
  if (std::thread::hardware_concurrency() > 0) CHECK(cores <= static_cast<int>(std::thread::hardware_concurrency()));
}

TEST_CASE("ember's --threads validator refuses like the others and lets 0 keep OpenMP's default", "[cli]") {
  std::string zero = "0", none = "x", absurd = "1000000";
  CHECK(thread_count(0)(zero).empty());
  CHECK(thread_count(1)(zero) == "must be a positive integer, got 0");
  CHECK(thread_count(0)(none) == "must be an integer >= 0, got x");
  CHECK(thread_count(1)(absurd).find("must be at most") == 0);
}
