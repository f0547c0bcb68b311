#include "apps/thread_count.h"

#include <sched.h>

#include <iostream>
#include <limits>
#include <sstream>
#include <thread>

#include "apps/cli_checks.h"

namespace ember::apps {

namespace {

std::string cores_text(int cores) { return std::to_string(cores) + (cores == 1 ? " CPU core" : " CPU cores"); }

}  // namespace

int usable_cpu_cores() {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  // Fails (EINVAL) on machines with more CPUs than a cpu_set_t holds (1024); the count below serves there.
  if (sched_getaffinity(0, sizeof(allowed), &allowed) == 0 && CPU_COUNT(&allowed) > 0) return CPU_COUNT(&allowed);
  const unsigned online = std::thread::hardware_concurrency();
  return online > 0 ? static_cast<int>(online) : 1;
}

ThreadCountCheck check_thread_count(int64_t threads, int cores) {
  ThreadCountCheck check;
  const int64_t most = int64_t{kMaxThreadsPerCore} * cores;
  if (threads > most) {
    std::ostringstream os;
    os << "must be at most " << most << " (" << kMaxThreadsPerCore << " per CPU core, and this process may use "
       << cores << "), got " << threads;
    check.error = os.str();
  } else if (threads > cores) {
    check.warning = "ember: warning: --threads " + std::to_string(threads) + " is more than the " + cores_text(cores) +
                    " this process may use; threads beyond that share cores and slow every step";
  }
  return check;
}

CLI::Validator thread_count(int64_t low) {
  const CLI::Validator integer =
      integer_between(low, std::numeric_limits<int32_t>::max(), low == 0 ? "an integer >= 0" : "a positive integer");
  return CLI::Validator(
      [integer](std::string& text) -> std::string {
        const std::string not_integer = integer(text);
        if (!not_integer.empty()) return not_integer;
        const int64_t threads = std::stoll(text);
        if (threads == 0) return "";  // OpenMP's default: its own choice of threads
        const ThreadCountCheck check = check_thread_count(threads, usable_cpu_cores());
        if (!check.warning.empty()) std::cerr << check.warning << "\n";
        return check.error;
      },
      integer.get_description());
}

}  // namespace ember::apps
