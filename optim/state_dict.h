#pragma once
// Reading back what Optimizer::state_dict wrote, with every check in one place: an entry
// is converted to the device and dtype of the tensor it restores, its shape must match,
// and an entry nobody took is an error (a file from another optimizer or model).
//
//   ember::optim::StateDictReader reader(state, "SGD");
//   Tensor buffer = reader.tensor("momentum_buffer.0", params[0]);  // undefined when absent
//   int64_t steps = reader.count("step.0", 0);
//   reader.finish();                                                  // throws on leftovers
#include <cstdint>
#include <set>
#include <string>

#include "core/named_tensors.h"

namespace ember::optim {

// One-element state entries: f64 for real values, i64 for counts.
Tensor state_scalar(double value);
Tensor state_count(int64_t value);
// Appends `part`'s entries to `state` with "prefix" before each name.
void append_part(NamedTensors& state, const std::string& prefix, const NamedTensors& part);

class StateDictReader {
 public:
  StateDictReader(const TensorMap& state, std::string owner);

  // The entry converted to `like`'s device and dtype (a new tensor); undefined when absent.
  Tensor tensor(const std::string& name, const Tensor& like);
  // A one-element entry; `fallback` when absent.
  double scalar(const std::string& name, double fallback);
  int64_t count(const std::string& name, int64_t fallback);
  // The entries under "prefix" with it removed (a part's own state), all taken.
  TensorMap part(const std::string& prefix);
  // Throws naming the first entry that no call above took.
  void finish() const;

 private:
  const Tensor* find(const std::string& name, int64_t numel);

  const TensorMap& state_;
  std::string owner_;
  std::set<std::string> taken_;
};

}  // namespace ember::optim
