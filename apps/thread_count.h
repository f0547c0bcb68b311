#pragma once
// --threads against the CPU cores this process may use:
//
//   cmd->add_option("--threads", o.threads, "CPU threads")->check(apps::thread_count());
//   // ember train --threads 8 on 2 cores     ->  on stderr: "ember: warning: --threads 8 is more
//   //                                             than the 2 CPU cores ...", and the run goes on
//   // ember train --threads 100000 on 2 cores ->  "--threads must be at most 128 (64 per CPU core,
//   //                                             and this process may use 2), got 100000"
//
// OpenMP runs as many threads as it is told: threads beyond the cores take turns on them,
// and every parallel loop waits at its barrier for the last one, so each step slows with
// no word. Commands that run with --threads check it here, once, while the command line is
// parsed.
#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

namespace ember::apps {

// Past this many threads per core, --threads is refused: it is a slip of the keyboard, not
// an experiment. Each thread would get under 2% of a core while every parallel loop waits
// for all of them, and a stack (the stack limit, usually 8 MiB of address space) and
// convolution scratch are paid once per thread. 64x leaves room to study oversubscription.
constexpr int kMaxThreadsPerCore = 64;

// The CPU cores this process may run on: its affinity mask (sched_getaffinity; taskset
// and container CPU sets narrow it), else std::thread::hardware_concurrency(), else 1.
int usable_cpu_cores();

// What --threads `threads` says on `cores` cores: an error (more than kMaxThreadsPerCore
// per core; worded as the validators' "must be ..."), a warning line (more than the
// cores), or neither.
struct ThreadCountCheck {
  std::string error;
  std::string warning;
};
ThreadCountCheck check_thread_count(int64_t threads, int cores);

// The --threads check for commands that run with that many threads: an integer from `low`
// (1, or 0 where 0 keeps OpenMP's default and is checked no further), refused or warned
// about on stderr as check_thread_count() says for usable_cpu_cores().
CLI::Validator thread_count(int64_t low = 1);

}  // namespace ember::apps
