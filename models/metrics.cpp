#include "models/metrics.h"

#include <vector>

#include "autograd/grad_mode.h"
#include "autograd/ops.h"
#include "core/error.h"

namespace ember::models {

int64_t count_correct(const Tensor& logits, const Tensor& labels) {
  EMBER_CHECK(logits.dim() == 2 && labels.dim() == 1 && labels.size(0) == logits.size(0),
              "accuracy: expected logits [N, C] and labels [N], got " << logits.shape() << " and " << labels.shape());
  EMBER_CHECK(labels.dtype() == DType::i64, "accuracy: labels must be i64, got " << dtype_name(labels.dtype()));
  if (logits.size(0) == 0) return 0;
  NoGradGuard no_grad;
  // N indices and N labels: comparing on the host costs one small copy.
  const std::vector<int64_t> predicted = argmax(logits.detach(), 1).to_vector<int64_t>();
  const std::vector<int64_t> truth = labels.to_vector<int64_t>();
  int64_t correct = 0;
  for (size_t i = 0; i < truth.size(); ++i) correct += predicted[i] == truth[i] ? 1 : 0;
  return correct;
}

double accuracy(const Tensor& logits, const Tensor& labels) {
  const int64_t n = labels.dim() == 1 ? labels.size(0) : 0;
  const int64_t correct = count_correct(logits, labels);
  return n > 0 ? static_cast<double>(correct) / static_cast<double>(n) : 0.0;
}

}  // namespace ember::models
