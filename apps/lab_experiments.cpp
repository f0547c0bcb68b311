#include "apps/lab_experiments.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <memory>
#include <sstream>
#include <vector>

#include "apps/lab_report.h"
#include "apps/zoo_workload.h"
#include "apps/svg_chart.h"
#include "apps/train_command.h"
#include "apps/train_setup.h"
#include "core/error.h"
#include "core/generator.h"
#include "data/data_loader.h"
#include "memory/empty.h"
#include "memory/memory.h"
#include "memory/recorder.h"
#include "memory/timeline_svg.h"
#include "models/sequential.h"
#include "models/recipe.h"
#include "models/zoo.h"
#include "optim/make_optimizer.h"
#include "train/plan/step_plan.h"
#include "train/trainer.h"

namespace ember::apps {

namespace {

using Clock = std::chrono::steady_clock;

// One bench-train step measured: the steady-state step's peaks (after one warm-up step)
// and the median time of `timed` steps.
struct StepMeasure {
  int64_t peak = 0, reserved = 0;
  std::array<int64_t, kNumMemoryCategories> by_category{};
  double ms = 0.0;
};

StepMeasure measure_step(const train::Workload& spec, int timed = 1) {
  empty_cache(spec.device);
  train::BuiltWorkload w = train::build_workload(spec);
  w.step(0);
  reset_peak_stats(spec.device);
  std::vector<double> times;
  for (int i = 1; i <= timed; ++i) {
    const Clock::time_point start = Clock::now();
    w.step(static_cast<size_t>(i));
    times.push_back(ms_since(start));
  }
  const MemoryStats stats = memory_stats(spec.device);
  StepMeasure m;
  m.peak = stats.allocated_bytes.peak;
  m.reserved = stats.reserved_bytes.peak;
  for (size_t c = 0; c < m.by_category.size(); ++c) m.by_category[c] = stats.by_category[c].peak;
  m.ms = median(times);
  return m;
}

int64_t activation(const StepMeasure& m) { return m.by_category[static_cast<size_t>(MemoryCategory::activation)]; }

// Does a real step at this batch run under a CPU limit of `budget` bytes?
bool runs_under(const train::Workload& spec, size_t budget) {
  empty_cache(kCPU);
  set_cpu_memory_limit(budget);
  bool ok = true;
  try {
    train::BuiltWorkload w = train::build_workload(spec);
    w.step(0);
    w.step(1);
  } catch (const OutOfMemoryError&) {
    ok = false;
  }
  set_cpu_memory_limit(0);
  empty_cache(kCPU);
  return ok;
}

}  // namespace

std::string lab_batch_size(const LabSetup& setup) {
  const std::vector<int64_t> batches{8, 16, 32, 64, 128, 256, 512};
  std::vector<double> xs, act, total;
  std::vector<std::vector<std::string>> rows;
  for (int64_t b : batches) {
    const StepMeasure m = measure_step(zoo_workload("convnet", b, "sgd"));
    xs.push_back(static_cast<double>(b));
    act.push_back(mib(activation(m)));
    total.push_back(mib(m.peak));
    rows.push_back({std::to_string(b), fixed(mib(activation(m))), fixed(mib(m.peak)), fixed(mib(m.reserved))});
  }
  const LinearFit fa = fit_line(xs, act), ft = fit_line(xs, total);
  const double budget = static_cast<double>(setup.budget_mib);
  const auto by_line = static_cast<int64_t>(std::floor((budget - ft.intercept) / ft.slope));
  // The planner's answer: the largest batch whose simulated step fits a device of the budget.
  const size_t budget_bytes = static_cast<size_t>(setup.budget_mib) << 20;
  int64_t lo = 1, hi = 4096;
  while (lo < hi) {
    const int64_t mid = (lo + hi + 1) / 2;
    // The threads the real steps below run with (the convolution's scratch is per thread).
    if (train::plan_step(zoo_workload("convnet", mid, "sgd"), omp_get_max_threads(), budget_bytes).fits) lo = mid;
    else hi = mid - 1;
  }
  const bool fits = runs_under(zoo_workload("convnet", lo, "sgd"), budget_bytes);
  const bool next_fits = runs_under(zoo_workload("convnet", lo + 1, "sgd"), budget_bytes);

  LineChart chart;
  chart.title = "ConvNet: peak bytes of a training step against batch";
  chart.x_label = "batch";
  chart.y_label = "MiB";
  chart.log2_x = true;
  ChartSeries a, t, fit_a, fit_t;
  a.name = "activation (measured)", a.x = xs, a.y = act;
  t.name = "whole step (measured)", t.x = xs, t.y = total;
  fit_a.name = "activation fit", fit_t.name = "step fit";
  for (ChartSeries* s : {&fit_a, &fit_t}) s->points = false, s->dashed = true;
  for (double x : xs) {
    fit_a.x.push_back(x), fit_a.y.push_back(fa.intercept + fa.slope * x);
    fit_t.x.push_back(x), fit_t.y.push_back(ft.intercept + ft.slope * x);
  }
  fit_a.color = a.color = "#e15759";
  fit_t.color = t.color = "#4e79a7";
  chart.series = {a, fit_a, t, fit_t};
  chart.y_marks = {{budget, "budget " + std::to_string(setup.budget_mib) + " MiB"}};
  write_picture(setup, "batch-size.svg", line_chart_svg(chart));

  std::ostringstream md;
  md << "## 1. Batch size\n\nConvNet, SGD, fp32, one steady-state step per batch (`ember bench-train --model convnet "
        "--batch B`); the data pool of eight batches is in the step's peak.\n\n"
     << markdown_table({"batch", "activation peak MiB", "step peak MiB", "reserved MiB"}, rows)
     << "\nFitted lines (least squares, MiB): activation = " << fixed(fa.intercept) << " + " << fixed(fa.slope, 4)
     << " x batch (r^2 " << fixed(fa.r2, 4) << "); whole step = " << fixed(ft.intercept) << " + " << fixed(ft.slope, 4)
     << " x batch (r^2 " << fixed(ft.r2, 4) << "). Activations grow linearly with the batch; the rest (weights, "
        "gradients, momentum) does not.\n\nThe largest batch for a " << setup.budget_mib << " MiB budget: the line "
        "says " << by_line << "; `ember plan` (the caching allocator's rounding and segments included) says " << lo
     << ". A real step at batch " << lo << " under `--memory-limit " << setup.budget_mib << "MiB` "
     << (fits ? "ran" : "ran out of memory") << "; at batch " << lo + 1 << " it "
     << (next_fits ? "also ran" : "ran out of memory") << ".\n\n![batch size](batch-size.svg)\n";
  return md.str();
}

std::string lab_accumulation(const LabSetup& setup) {
  constexpr int64_t kBatch = 256;
  std::vector<std::vector<std::string>> rows;
  std::vector<double> micro, peaks;
  for (int64_t accum : {1, 2, 4, 8, 16}) {
    TrainOptions o;
    o.run.model = "lenet5";
    o.data_dir = setup.data_dir;
    o.epochs = 1;
    o.run.batch = kBatch;
    o.run.threads = setup.threads;
    o.run.json = true;
    o.progress = false;
    o.run.technique.accum = accum;
    empty_cache(kCPU);
    std::ostringstream ignored;
    const TrainSummary s = run_train(o, ignored);
    const double peak = mib(s.report["peak_bytes"].get<int64_t>());
    const double act = s.report["peak_mib_by_category"][0]["activation"].get<double>();
    micro.push_back(static_cast<double>(kBatch / accum));
    peaks.push_back(peak);
    const double data_mib = s.report["peak_mib_by_category"][0]["data"].get<double>();
    rows.push_back({std::to_string(accum), std::to_string(kBatch / accum), fixed(act), fixed(data_mib), fixed(peak),
                    fixed(100.0 * s.final_accuracy), fixed(s.final_loss, 4), fixed(s.seconds, 1)});
  }
  LineChart chart;
  chart.title = "LeNet-5, effective batch 256: step peak against micro-batch";
  chart.x_label = "micro-batch (256 / accum)";
  chart.y_label = "MiB";
  chart.log2_x = true;
  ChartSeries p;
  p.name = "step peak (measured)", p.x = micro, p.y = peaks;
  chart.series = {p};
  write_picture(setup, "accumulation.svg", line_chart_svg(chart));
  std::ostringstream md;
  md << "## 2. Gradient accumulation\n\nLeNet-5 on Fashion-MNIST, one epoch, effective batch 256 split into `--accum` "
        "micro-batches (`ember train --model lenet5 --epochs 1 --batch 256 --accum K`). The optimizer sees the same "
        "gradient (each micro-batch's loss is weighted by its share) up to the order of float sums, so accuracy "
        "moves only by what training makes of that rounding, while the activations shrink with the micro-batch. "
        "The data set itself (category data) stays resident in host memory and dominates the peak.\n\n"
     << markdown_table({"accum", "micro-batch", "activation peak MiB", "data MiB", "peak MiB", "test accuracy %",
                        "train loss", "run s"},
                       rows)
     << "\n![accumulation](accumulation.svg)\n";
  return md.str();
}

std::string lab_checkpointing(const LabSetup& setup) {
  constexpr int64_t kBatch = 64;
  const auto seq = std::dynamic_pointer_cast<nn::Sequential>(models::make_model("resnet20", {1, 28, 28}, 10));
  EMBER_CHECK(seq, "ember lab: resnet20 is expected to be an nn::Sequential");
  const std::string every_block = std::to_string(seq->size());
  std::vector<std::vector<std::string>> rows;
  LineChart chart;
  chart.title = "ResNet-20, batch 64: activation peak against time per step";
  chart.x_label = "ms per step (median of 3)";
  chart.y_label = "activation peak MiB";
  for (const auto& [label, checkpoint] : std::vector<std::pair<std::string, std::string>>{
           {"none", "none"}, {"every block (" + every_block + " segments)", every_block}, {"sqrt", "sqrt"}}) {
    train::TrainerOptions t;
    t.checkpoint = train::CheckpointPolicy::parse(checkpoint);
    const StepMeasure m = measure_step(zoo_workload("resnet20", kBatch, "sgd", t), 3);
    rows.push_back({label, fixed(mib(activation(m))), fixed(mib(m.peak)), fixed(m.ms, 1)});
    ChartSeries s;
    s.name = label, s.x = {m.ms}, s.y = {mib(activation(m))};
    chart.series.push_back(s);
  }
  write_picture(setup, "checkpointing.svg", line_chart_svg(chart));
  std::ostringstream md;
  md << "## 3. Checkpointing\n\nResNet-20, batch 64, SGD (`ember bench-train --model resnet20 --batch 64 --checkpoint "
        "none|" << every_block << "|sqrt`): each segment keeps only its input and recomputes the rest during "
        "backward. \"Every block\" makes each of the model's " << every_block << " top-level layers a segment.\n\n"
     << markdown_table({"checkpoint", "activation peak MiB", "step peak MiB", "ms per step"}, rows)
     << "\n![checkpointing](checkpointing.svg)\n";
  return md.str();
}

std::string lab_mixed_precision(const LabSetup& setup) {
  (void)setup;
  constexpr int64_t kBatch = 128;
  train::TrainerOptions fp16;
  fp16.precision = train::Precision::fp16;
  const StepMeasure f32 = measure_step(zoo_workload("convnet", kBatch, "sgd"), 3);
  const StepMeasure f16 = measure_step(zoo_workload("convnet", kBatch, "sgd", fp16), 3);
  BarChart chart;
  chart.title = "ConvNet, batch 128: each category's peak, fp32 and fp16";
  chart.y_label = "MiB";
  chart.keys = {"fp32", "fp16"};
  chart.stacked = false;
  std::vector<std::vector<std::string>> rows;
  for (size_t c = 0; c < f32.by_category.size(); ++c) {
    if (f32.by_category[c] == 0 && f16.by_category[c] == 0) continue;
    const std::string name = category_name(static_cast<MemoryCategory>(c));
    chart.groups.push_back({name, {mib(f32.by_category[c]), mib(f16.by_category[c])}});
    rows.push_back({name, fixed(mib(f32.by_category[c])), fixed(mib(f16.by_category[c]))});
  }
  rows.push_back({"**step peak**", fixed(mib(f32.peak)), fixed(mib(f16.peak))});
  rows.push_back({"ms per step (median of 3)", fixed(f32.ms, 1), fixed(f16.ms, 1)});
  write_picture(setup, "mixed-precision.svg", bar_chart_svg(chart));
  std::ostringstream md;
  md << "## 4. Mixed precision\n\nConvNet, batch 128, SGD (`ember bench-train --model convnet --batch 128 "
        "--precision fp32|fp16`). fp16 stores weights, activations and gradients in half precision and keeps fp32 "
        "master weights (a new category) for the update. On the CPU it is storage only: every op widens to f32 to "
        "compute, so it saves bytes and costs time; on a GPU the same bytes would move faster.\n\n"
     << markdown_table({"category (own peak)", "fp32 MiB", "fp16 MiB"}, rows)
     << "\n![mixed precision](mixed-precision.svg)\n";
  return md.str();
}

std::string lab_releasing_memory(const LabSetup& setup) {
  (void)setup;
  std::vector<std::vector<std::string>> rows;
  BarChart chart;
  chart.title = "Allocated and reserved bytes as memory is freed";
  chart.y_label = "MiB";
  chart.keys = {"allocated", "reserved"};
  chart.stacked = false;
  int stage_number = 0;
  auto stage = [&](const std::string& what) {
    const MemoryStats s = memory_stats(kCPU);
    ++stage_number;
    rows.push_back({std::to_string(stage_number), what, fixed(mib(s.allocated_bytes.current)),
                    fixed(mib(s.reserved_bytes.current))});
    chart.groups.push_back({std::to_string(stage_number), {mib(s.allocated_bytes.current), mib(s.reserved_bytes.current)}});
  };
  empty_cache(kCPU);
  stage("start (empty cache)");
  {
    auto w = std::make_unique<train::BuiltWorkload>(train::build_workload(zoo_workload("convnet", 128, "sgd")));
    w->step(0);
    w->step(1);
    stage("after two training steps: weights, gradients, momentum and data pool alive; activations freed");
    Tensor big = empty({4, 1024, 1024});
    stage("a 16 MiB tensor allocated");
    Tensor alias = big.detach();  // a second handle to the same storage
    big = Tensor();
    stage("that tensor dropped while an alias (detach(), a view) still holds its storage");
    alias = Tensor();
    stage("the alias dropped: the last reference; the bytes go back to the cache");
    w.reset();
    stage("model, optimizer and data dropped (the end of their C++ scope; Python's del)");
  }
  empty_cache(kCPU);
  stage("empty_cache(): cached segments returned to the system");
  write_picture(setup, "releasing-memory.svg", bar_chart_svg(chart));
  std::ostringstream md;
  md << "## 5. Releasing cached memory\n\nConvNet, batch 128, on the CPU's caching allocator. Freeing a tensor "
        "returns its bytes to the allocator's cache, not to the system: *allocated* falls, *reserved* does not, "
        "and the next allocation of a similar size is served from the cache without a system call. A tensor "
        "frees nothing while any other handle (an alias, a view, a saved tensor) shares its storage. Only "
        "`empty_cache()` hands the cached segments back; segments that still hold a live block stay.\n\n"
     << markdown_table({"stage", "what happened", "allocated MiB", "reserved MiB"}, rows)
     << "\n![releasing memory](releasing-memory.svg)\n";
  return md.str();
}

std::string lab_data_loading(const LabSetup& setup) {
  constexpr int64_t kBatch = 64;
  constexpr int kSteps = 150, kRepeats = 3, kRecorded = 3;
  const TrainData data = load_train_data("fashion-mnist", setup.data_dir, {});
  const models::Recipe recipe = models::default_recipe("lenet5");
  optim::OptimizerSpec sgd{"sgd", recipe.lr, recipe.momentum, recipe.nesterov, 0.0};
  // [augmented][prefetch]: per-step and waiting times of each run; the augmented runs' timelines.
  std::vector<double> step_ms[2][2], wait_ms[2][2];
  std::vector<MemoryRecorder::Sample> recorded[2];
  MemoryRecorder::Sample recorded_peak[2];
  for (int repeat = 0; repeat < kRepeats; ++repeat)
    for (int augmented = 0; augmented < 2; ++augmented)
      for (int prefetch = 0; prefetch < 2; ++prefetch) {  // interleaved, so drift hits all alike
        manual_seed(0);
        auto model = models::make_model("lenet5", sample_shape(data.train), data.train.num_classes);
        train::Trainer trainer(model, [&](std::vector<Tensor> params) {
          return optim::make_optimizer(sgd, std::move(params));
        });
        data::DataLoaderOptions options = loader_options(data, kBatch, true, 0, kCPU);
        options.prefetch(prefetch == 1);
        if (augmented) options.transforms().random_crop(4).random_horizontal_flip();
        data::DataLoader loader(data.train, options);
        loader.start_epoch(0);
        const bool record = repeat == 0 && augmented == 1;
        MemoryRecorder recorder(kCPU);
        if (record) recorder.start();
        data::Batch batch;
        double wait = 0.0;
        const Clock::time_point start = Clock::now();
        for (int step = 0; step < kSteps; ++step) {
          if (step == kRecorded) recorder.stop();
          recorder.set_step(step);
          const Clock::time_point before = Clock::now();
          EMBER_CHECK(loader.next(batch), "ember lab: the training set ran out of batches");
          wait += ms_since(before);
          trainer.step(batch.images, batch.labels);
        }
        step_ms[augmented][prefetch].push_back(ms_since(start) / kSteps);
        wait_ms[augmented][prefetch].push_back(wait / kSteps);
        if (record) {
          recorded[prefetch] = recorder.samples();
          recorded_peak[prefetch] = recorder.peak();
        }
      }
  for (int p = 0; p < 2; ++p) {  // both timelines start at 0 ms
    const double t0 = recorded[p].empty() ? 0.0 : recorded[p].front().time_ms;
    for (auto& sample : recorded[p]) sample.time_ms -= t0;
    recorded_peak[p].time_ms -= t0;
  }
  const TimelineScale scale = covering(timeline_scale(recorded[0]), timeline_scale(recorded[1]));
  write_picture(setup, "data-loading-off.svg", timeline_svg(recorded[0], recorded_peak[0], scale));
  write_picture(setup, "data-loading-on.svg", timeline_svg(recorded[1], recorded_peak[1], scale));
  std::vector<std::vector<std::string>> rows;
  for (int augmented = 0; augmented < 2; ++augmented)
    for (int p = 0; p < 2; ++p) {
      const double step = median(step_ms[augmented][p]), wait = median(wait_ms[augmented][p]);
      rows.push_back({augmented ? "normalise + random crop (pad 4) + flip" : "normalise",
                      p ? "on (2 batches ahead, background thread)" : "off (prepared when asked)", fixed(step),
                      fixed(wait), fixed(step - wait)});
    }
  std::ostringstream md;
  md << "## 6. Data loading\n\nLeNet-5 on Fashion-MNIST, batch " << kBatch << ", " << kSteps
     << " steps, the training loader shuffling, with its normalisation alone and with random crops and flips "
        "added, prefetching off and on, all four interleaved, medians of "
     << kRepeats << " runs. *Waiting* is the time `next()` took: without prefetching the preparation itself, with "
        "it the hand-over from the loader thread. This is a CPU run, so pinned host memory (the GPU loader's asynchronous copy) does not apply.\n\n"
     << markdown_table({"transforms", "prefetch", "ms per step", "ms waiting for data", "ms computing"}, rows)
     << "\nWithout prefetching, preparing a batch takes "
     << fixed(100.0 * median(wait_ms[0][0]) / median(step_ms[0][0]), 1) << "% of a step ("
     << fixed(100.0 * median(wait_ms[1][0]) / median(step_ms[1][0]), 1)
     << "% with the random crops and flips): that is all prefetching can hide on this machine, and the hand-over "
        "costs about as much. It pays where preparing a batch is a real share of the step: decoding files, large "
        "images, or a GPU step of a millisecond.\n\nWhere loading sits: the first " << kRecorded << " steps of the augmented runs on one time and byte "
        "scale, the data phase shaded grey; prefetch off first, then on (the prefetched batches are prepared on "
        "another thread; their bytes are category data either way).\n\n![prefetch off](data-loading-off.svg)\n\n"
        "![prefetch on](data-loading-on.svg)\n";
  return md.str();
}

}  // namespace ember::apps
