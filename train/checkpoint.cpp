#include "train/checkpoint.h"

#include "autograd/engine.h"
#include "autograd/grad_mode.h"
#include "autograd/node.h"
#include "autograd/record.h"
#include "autograd/recompute_state.h"
#include "core/error.h"
#include "core/generator.h"

namespace ember::train {

namespace {

// Catches the gradient that reaches one recomputed input, so the checkpoint can hand it
// to its own input edge (a leaf would relabel it as a parameter gradient).
class CaptureGrad : public autograd::Node {
 public:
  const char* name() const override { return "CaptureGrad"; }
  std::vector<Tensor> apply(const Tensor& grad_output) override {
    grad = grad_output;
    return {};
  }
  Tensor grad;
};

class CheckpointBackward : public autograd::Node {
 public:
  CheckpointBackward(CheckpointFn fn, const std::vector<Tensor>& inputs, GeneratorState rng)
      : fn_(std::move(fn)), rng_(rng) {
    for (const Tensor& t : inputs) {
      save(t);
      needs_grad_.push_back(t.defined() && t.requires_grad());
    }
  }
  const char* name() const override { return "CheckpointBackward"; }

  std::vector<Tensor> apply(const Tensor& grad_output) override {
    std::vector<Tensor> inputs;
    std::vector<std::shared_ptr<CaptureGrad>> captures(needs_grad_.size());
    for (size_t i = 0; i < needs_grad_.size(); ++i) {
      Tensor input = saved(i);
      if (input.defined()) input = input.detach();
      if (needs_grad_[i]) {
        captures[i] = std::make_shared<CaptureGrad>();
        autograd::record(input, captures[i], std::vector<Tensor>{});
      }
      inputs.push_back(input);
    }

    Tensor output;
    {
      RestoreGeneratorState restore_generator;
      set_generator_state(rng_);  // the same dropout masks as the first forward
      AutoGradMode grad_on(true);
      autograd::RecomputeScope recompute;
      output = fn_(inputs);
    }
    EMBER_CHECK(output.defined() && output.shape() == grad_output.shape(),
                "checkpoint: the recomputed output " << (output.defined() ? output.str() : std::string("(undefined)"))
                    << " differs from the first forward's " << grad_output.shape()
                    << "; the checkpointed function must return the same shape every time");
    inputs.clear();  // only the recomputed graph holds them now
    if (output.requires_grad()) autograd::run_backward(output, grad_output, /*retain_graph=*/false);

    std::vector<Tensor> grads(needs_grad_.size());
    for (size_t i = 0; i < captures.size(); ++i)
      if (captures[i]) grads[i] = std::move(captures[i]->grad);
    return grads;
  }

 private:
  CheckpointFn fn_;
  GeneratorState rng_;
  std::vector<bool> needs_grad_;
};

}  // namespace

Tensor checkpoint(const CheckpointFn& fn, const std::vector<Tensor>& inputs) {
  EMBER_CHECK(fn, "checkpoint: the function is empty");
  if (!GradMode::is_enabled()) return fn(inputs);  // no graph to save memory on

  const GeneratorState rng = generator_state();
  Tensor output;
  {
    NoGradGuard no_grad;
    output = fn(inputs);
  }
  EMBER_CHECK(output.defined(), "checkpoint: the function returned an undefined tensor");
  // A fresh alias, so recording on it never touches an input fn returned as is.
  output = output.detach();
  autograd::record(output, std::make_shared<CheckpointBackward>(fn, inputs, rng), inputs);
  return output;
}

Tensor checkpoint(const std::function<Tensor(const Tensor&)>& fn, const Tensor& input) {
  EMBER_CHECK(fn, "checkpoint: the function is empty");
  return checkpoint([fn](const std::vector<Tensor>& in) { return fn(in[0]); }, std::vector<Tensor>{input});
}

}  // namespace ember::train
