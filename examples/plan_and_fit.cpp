// Plans a training step before running it, lets the planner choose the memory techniques for
// a byte budget, trains under that budget with train::fit — a model and a loss of the program's
// own — and resumes a run stopped halfway from its checkpoint, ending with the bytes the
// uninterrupted run ends with. Everything here is the library: no command line involved.
#include <cstdio>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "ember/ember.h"


namespace {

constexpr int64_t kFeatures = 16, kOutputs = 4, kSamples = 2048, kBatch = 256;

// A regression network of our own: two layers, a hidden width of 512.
class Regressor : public ember::nn::Module {
 public:
  Regressor() {
    hidden_ = register_module("hidden", std::make_shared<ember::nn::Linear>(kFeatures, 512));
    out_ = register_module("out", std::make_shared<ember::nn::Linear>(512, kOutputs));
  }
  ember::Tensor forward_impl(const ember::Tensor& x) override {
    return out_->forward(ember::relu(hidden_->forward(x)));
  }

 private:
  std::shared_ptr<ember::nn::Linear> hidden_, out_;
};

// y = x W^T for a fixed W (entries in [-1, 1]), plus a little noise: what the network learns.
std::shared_ptr<const ember::data::SampleDataset> points() {
  return ember::data::lambda_dataset(kSamples, [](int64_t i) {
    std::vector<float> x(kFeatures), y(kOutputs, 0.0f);
    for (int64_t f = 0; f < kFeatures; ++f) x[static_cast<size_t>(f)] = static_cast<float>((i * (f + 3)) % 17) / 17.0f - 0.5f;
    for (int64_t o = 0; o < kOutputs; ++o)
      for (int64_t f = 0; f < kFeatures; ++f)
        y[static_cast<size_t>(o)] += x[static_cast<size_t>(f)] * static_cast<float>(((o + 1) * (f + 2)) % 5 - 2) / 2.0f;
    y[0] += 0.01f * static_cast<float>(i % 7 - 3);
    return ember::data::Sample{ember::from_vector<float>(x, {kFeatures}), 0, ember::from_vector<float>(y, {kOutputs})};
  });
}

ember::data::DataLoaderOptions loader_options(bool shuffle) {
  return ember::data::DataLoaderOptions().batch_size(kBatch).shuffle(shuffle).seed(7);
}

double mib(int64_t bytes) { return static_cast<double>(bytes) / (1 << 20); }

std::string techniques(const ember::train::TrainerOptions& t) {
  return std::string(ember::train::precision_name(t.precision)) + ", checkpoint " + t.checkpoint.str() + ", accum " +
         std::to_string(t.accum);
}

// One run of the fit below; `stop_at_step` > 0 stops it there (as a killed process would).
std::vector<std::vector<float>> run(const ember::train::Workload& w, const ember::train::TrainerOptions& chosen,
                                    ember::train::FitOptions options, int64_t stop_at_step, bool print) {
  ember::manual_seed(1);
  ember::train::Trainer trainer(w.model(), w.optimizer, chosen);
  ember::data::DataLoader train_loader(points(), loader_options(true)), eval_loader(points(), loader_options(false));
  ember::train::FitCallbacks callbacks;
  int64_t steps = 0;
  callbacks.on_step = [&](const ember::train::StepProgress&) {
    if (++steps == stop_at_step) throw std::runtime_error("stopped");
  };
  if (print)
    callbacks.on_epoch = [](const ember::train::EpochResult& e) {
      std::printf("epoch %lld  train mse %.5f  eval mse %.5f  peak %.2f MiB\n", static_cast<long long>(e.epoch), e.loss,
                  e.eval->loss, mib(e.memory.allocated_bytes.peak));
    };
  try {
    ember::train::fit(trainer, train_loader, &eval_loader, options, callbacks);
  } catch (const std::runtime_error& e) {
    if (std::string(e.what()) != "stopped") throw;
    std::printf("stopped after step %lld; the checkpoint holds step %lld\n", static_cast<long long>(stop_at_step),
                static_cast<long long>(stop_at_step / options.save_every * options.save_every));
  }
  std::vector<std::vector<float>> state;
  for (const auto& [name, t] : trainer.state_dict()) state.push_back(t.to(ember::kFloat32).to_vector<float>());
  return state;
}

}  // namespace

int main() {
  // The step to plan: our model, Adam, mean squared error, batches of 256.
  ember::train::Workload w;
  w.model = [] { return std::make_shared<Regressor>(); };
  w.optimizer = [](std::vector<ember::Tensor> params) {
    return ember::optim::make_optimizer({"adam", 3e-3}, std::move(params));
  };
  w.trainer.loss = [](const ember::Tensor& y, const ember::Tensor& t) { return ember::mse_loss(y, t); };
  w.batch = kBatch;
  w.sample = ember::Shape{kFeatures};
  w.target = ember::Shape{kOutputs};
  w.data_batches = 3;  // the loader's two prefetched batches and the one in use
  const int threads = 1;

  const ember::train::StepPrediction plain = ember::train::plan_step(w, threads);
  std::printf("planned step: %.2f MiB allocated, %.2f MiB reserved at its peak (%s), simulated in %.1f ms\n",
              mib(plain.peak_bytes), mib(plain.peak_reserved_bytes), techniques(w.trainer).c_str(), plain.simulate_ms);

  // A budget the plain step does not fit: the planner chooses how to run it instead.
  const size_t budget = static_cast<size_t>(plain.peak_reserved_bytes) * 3 / 4;
  const ember::train::BudgetFit fit = ember::train::fit_memory_budget(w, threads, budget);
  if (!fit.chosen) {
    std::printf("nothing fits %.2f MiB\n", mib(static_cast<int64_t>(budget)));
    return 1;
  }
  std::printf("budget %.2f MiB: %s, predicted peak %.2f MiB reserved, modelled slowdown %.2fx\n",
              mib(static_cast<int64_t>(budget)), techniques(fit.chosen->trainer).c_str(),
              mib(fit.chosen->prediction.peak_reserved_bytes), fit.chosen->slowdown);

  // Train under that budget as a hard limit, saving a checkpoint every 5 steps.
  ember::set_cpu_memory_limit(budget);
  ember::train::FitOptions options;
  options.epochs = 4;
  options.schedule = ember::optim::make_schedule("cosine", 3e-3, 4 * (kSamples / kBatch));
  options.save = "plan_and_fit.ckpt";
  options.save_every = 5;
  options.identity = {{"model", "regressor 16-512-4"}, {"batch", std::to_string(kBatch)}};
  const auto whole = run(w, fit.chosen->trainer, options, 0, true);
  run(w, fit.chosen->trainer, options, 13, false);  // a run stopped after step 13 of 32
  options.resume = options.save;
  const auto resumed = run(w, fit.chosen->trainer, options, 0, false);
  ember::set_cpu_memory_limit(0);
  std::remove("plan_and_fit.ckpt");
  std::printf("the resumed run matches the uninterrupted run: %s\n", resumed == whole ? "yes" : "NO");
  return resumed == whole ? 0 : 1;
}
