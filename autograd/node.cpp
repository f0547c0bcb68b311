#include "autograd/node.h"

#include "core/error.h"

namespace ember::autograd {

Node::~Node() {
  thread_local bool draining = false;
  thread_local std::vector<std::shared_ptr<Node>> orphans;
  for (auto& n : next)
    if (n && n.use_count() == 1) orphans.push_back(std::move(n));
  next.clear();
  if (draining) return;
  draining = true;
  while (!orphans.empty()) {
    std::shared_ptr<Node> n = std::move(orphans.back());
    orphans.pop_back();
    n.reset();  // its destructor queues its own sole-owned inputs
  }
  draining = false;
}

size_t Node::save(const Tensor& t) {
  saved_.push_back(t.defined() ? t.detach() : Tensor());
  saved_versions_.push_back(t.defined() ? t.version() : 0);
  return saved_.size() - 1;
}

const Tensor& Node::saved(size_t index) const {
  EMBER_CHECK(!released_, name() << ": its saved tensors were already freed by an earlier backward; "
                                    "call backward(grad, /*retain_graph=*/true) to backward twice");
  const Tensor& t = saved_.at(index);
  if (t.defined()) {
    const uint64_t saved_at = saved_versions_[index];
    const uint64_t now = t.version();
    EMBER_CHECK(now == saved_at, "one of the tensors needed for gradient computation has been modified by an "
                                 "in-place operation: "
                                     << name() << " saved a " << t.shape() << " tensor at version " << saved_at
                                     << ", it is now at version " << now
                                     << "; make the in-place change after backward(), or make it on a clone()");
  }
  return t;
}

}  // namespace ember::autograd
