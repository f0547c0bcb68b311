#include "train/checkpoint_sequential.h"

#include <algorithm>
#include <limits>
#include <sstream>

#include "autograd/grad_mode.h"
#include "autograd/recompute_state.h"
#include "core/error.h"
#include "core/generator.h"
#include "core/row_view.h"
#include "memory/allocation_observer.h"
#include "memory/memory.h"
#include "train/checkpoint.h"

namespace ember::train {

namespace {

void check_segments(int64_t layers, int64_t segments) {
  EMBER_CHECK(segments >= 1 && segments <= layers, "checkpoint_sequential: segments must be between 1 and the "
                                                       << layers << " layers of the Sequential, got " << segments);
}

// For each layer of a forward with the graph kept, in activation bytes since the input: the
// most alive while it ran (its outputs and transients on top of what earlier layers saved),
// what is alive after it (everything saved so far and its output), and its output's bytes.
struct LayerCosts {
  std::vector<double> highest, alive, output;
};

// Follows the activation bytes on one device, highest point included; passes every event on
// to the observer that was installed before (the memory report's recorder).
class ActivationWatch : public AllocationObserver {
 public:
  explicit ActivationWatch(Device device) : device_(device) {}

  void on_event(const AllocationEvent& e) noexcept override {
    if (e.category == MemoryCategory::activation && e.device == device_) {
      current_ += e.allocate ? e.bytes : -e.bytes;
      highest_ = std::max(highest_, current_);
    }
    install_.forward(e);
  }
  int64_t current() const { return current_; }
  int64_t take_highest() {  // since the last call
    const int64_t h = highest_;
    highest_ = current_;
    return h;
  }

 private:
  Device device_;
  int64_t current_ = 0, highest_ = 0;
  ObserverInstall install_{this};  // last: installed once the rest is built
};

// One forward of the first rows of `sample` with grad mode on and the graph kept. Inside a
// RecomputeScope, with the generator restored afterwards: no running statistic and no
// random draw of the real step changes.
LayerCosts measure_layers(nn::Sequential& seq, const Tensor& sample) {
  const int64_t rows = std::min<int64_t>(2, sample.size(0));
  RestoreGeneratorState restore_generator;
  LayerCosts costs;
  {
    AutoGradMode grad_on(true);
    autograd::RecomputeScope no_side_effects;
    ActivationWatch watch(sample.device());
    // Only the current output and the graph stay alive, as in training.
    Tensor h = row_view(sample, 0, rows);
    for (size_t i = 0; i < seq.size(); ++i) {
      h = seq[i]->forward(h);
      costs.highest.push_back(static_cast<double>(watch.take_highest()));
      costs.alive.push_back(static_cast<double>(watch.current()));
      costs.output.push_back(static_cast<double>(h.nbytes()));
    }
  }
  return costs;
}

// Exhaustive search for the split whose highest point is lowest. Segment j's highest point:
// the outputs of segments 0..j-1 (kept as later segments' inputs) plus the most its own layers
// hold at once while it is recomputed (the last segment: while its ordinary graph is alive).
class SplitSearch {
 public:
  SplitSearch(const LayerCosts& costs, int64_t segments) : costs_(costs), segments_(segments) {}

  std::vector<int64_t> best() {
    std::vector<int64_t> bounds{0};
    visit(bounds, 0.0, 0.0);
    return best_bounds_;
  }

 private:
  double segment_kept(int64_t begin, int64_t end) const {
    const double before = begin == 0 ? 0.0 : costs_.alive[static_cast<size_t>(begin - 1)];
    double most = 0;
    for (int64_t i = begin; i < end; ++i) most = std::max(most, costs_.highest[static_cast<size_t>(i)] - before);
    return most;
  }

  void visit(std::vector<int64_t>& bounds, double boundary_bytes, double highest) {
    if (highest >= best_highest_) return;
    const int64_t layers = static_cast<int64_t>(costs_.alive.size());
    const int64_t begin = bounds.back();
    if (static_cast<int64_t>(bounds.size()) == segments_) {
      const double top = std::max(highest, boundary_bytes + segment_kept(begin, layers));
      if (top < best_highest_) best_highest_ = top, best_bounds_ = bounds;
      return;
    }
    const int64_t segments_after = segments_ - static_cast<int64_t>(bounds.size());
    for (int64_t end = begin + 1; end <= layers - segments_after; ++end) {
      bounds.push_back(end);
      visit(bounds, boundary_bytes + costs_.output[static_cast<size_t>(end - 1)],
            std::max(highest, boundary_bytes + segment_kept(begin, end)));
      bounds.pop_back();
    }
  }

  const LayerCosts& costs_;
  int64_t segments_;
  double best_highest_ = std::numeric_limits<double>::infinity();
  std::vector<int64_t> best_bounds_;
};

// C(n, k), saturating at `cap`.
double choose(int64_t n, int64_t k, double cap) {
  double c = 1;
  for (int64_t i = 1; i <= k && c < cap; ++i) c = c * static_cast<double>(n - k + i) / static_cast<double>(i);
  return c;
}

}  // namespace

std::vector<int64_t> equal_segment_bounds(int64_t layers, int64_t segments) {
  check_segments(layers, segments);
  std::vector<int64_t> bounds;
  for (int64_t j = 0; j < segments; ++j) bounds.push_back(j * layers / segments);
  return bounds;
}

std::vector<int64_t> balanced_segment_bounds(nn::Sequential& seq, int64_t segments, const Tensor& sample) {
  const auto layers = static_cast<int64_t>(seq.size());
  check_segments(layers, segments);
  EMBER_CHECK(sample.defined() && sample.dim() >= 1 && sample.size(0) >= 1,
              "balanced_segment_bounds: the sample must hold at least one row, got "
                  << (sample.defined() ? sample.str() : std::string("an undefined tensor")));
  // Past a million candidate splits (hundreds of top-level layers) equal counts will do.
  constexpr double kMaxSplits = 1e6;
  if (segments == 1 || choose(layers - 1, segments - 1, kMaxSplits) >= kMaxSplits)
    return equal_segment_bounds(layers, segments);
  return SplitSearch(measure_layers(seq, sample), segments).best();
}

Tensor checkpoint_sequential(nn::Sequential& seq, const std::vector<int64_t>& bounds, const Tensor& x) {
  const auto layers = static_cast<int64_t>(seq.size());
  bool valid = !bounds.empty() && bounds.front() == 0 && bounds.back() < layers;
  for (size_t j = 1; valid && j < bounds.size(); ++j) valid = bounds[j - 1] < bounds[j];
  if (!valid) {
    std::ostringstream text;
    for (int64_t b : bounds) text << (text.tellp() > 0 ? ", " : "") << b;
    EMBER_THROW("checkpoint_sequential: segment starts {" << text.str() << "} must begin with 0 and increase "
                                                          "strictly below the " << layers << " layers");
  }
  Tensor h = x;
  for (size_t j = 0; j < bounds.size(); ++j) {
    const auto begin = static_cast<size_t>(bounds[j]);
    if (j + 1 == bounds.size()) return seq.forward_range(h, begin, seq.size());
    const auto end = static_cast<size_t>(bounds[j + 1]);
    h = checkpoint([&seq, begin, end](const Tensor& in) { return seq.forward_range(in, begin, end); }, h);
  }
  return h;
}

Tensor checkpoint_sequential(nn::Sequential& seq, int64_t segments, const Tensor& x) {
  return checkpoint_sequential(seq, equal_segment_bounds(static_cast<int64_t>(seq.size()), segments), x);
}

}  // namespace ember::train
