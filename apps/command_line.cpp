#include "apps/command_line.h"

#include "apps/rank_run.h"

namespace ember::apps {

CommandLine::CommandLine() {
  app.require_subcommand(1);
  train = add_train_command(app, train_options);
  eval = add_eval_command(app, eval_options);
  bench = add_bench_train_command(app, bench_options);
  plan = add_plan_command(app, plan_options);
  compare = add_compare_command(app, compare_options);
  lab = add_lab_command(app, lab_options);
}

int CommandLine::run(std::ostream& out) {
  for (const CLI::App* command : {train, eval, bench, plan, compare, lab})
    if (command->parsed()) check_command_for_ranks(*command);
  if (train->parsed()) return train_command(train_options, out);
  if (eval->parsed()) return eval_command(eval_options, out);
  if (bench->parsed()) bench_train_command(bench_options, out);
  if (plan->parsed()) plan_command(plan_options, out);
  if (lab->parsed()) lab_command(lab_options, out);
  if (compare->parsed()) compare_command(compare_options, out);
  return 0;
}

}  // namespace ember::apps
