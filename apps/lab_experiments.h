#pragma once
// The memory lab's experiments (apps/lab_command.h runs them in order). Each measures on
// this machine, writes its pictures into the lab folder and returns its markdown section.
//
//   LabSetup setup{"docs/lab", 2, "", 64};
//   std::string section = lab_batch_size(setup);   // "## 1. Batch size ..." + table + ![](batch-size.svg)
#include <cstdint>
#include <string>

namespace ember::apps {

struct LabSetup {
  std::string out;       // folder for the pictures
  int threads = 2;       // ember train's --threads in the accumulation runs (lab_command sets OpenMP's count)
  std::string data_dir;  // Fashion-MNIST
  int64_t budget_mib = 64;
};

std::string lab_batch_size(const LabSetup& setup);
std::string lab_accumulation(const LabSetup& setup);
std::string lab_checkpointing(const LabSetup& setup);
std::string lab_mixed_precision(const LabSetup& setup);
std::string lab_releasing_memory(const LabSetup& setup);
std::string lab_data_loading(const LabSetup& setup);
// One rank's memory for 1, 2, 4 ranks x ZeRO 0, 1, 2, planned and measured (mpiexec; apps/lab_data_parallel.cpp).
std::string lab_data_parallel(const LabSetup& setup);

}  // namespace ember::apps
