#include "trainer/options/sections.h"

namespace trainer::options {

namespace {

Section adam_like(const std::string& name, const std::string& weight_decay, const std::string& about) {
  Section adam{"optimizer", name, true, about, {}};
  adam.options = {
      text("name", name).means("the optimizer"),
      number("lr", "1.0e-3").at_least(0).means("the learning rate (0 freezes the weights, as in PyTorch)"),
      number("weight_decay", weight_decay).at_least(0).means(name == "adamw" ? "decoupled weight decay" : "L2 penalty"),
      numbers("betas", "[0.9, 0.999]").at_least(0).below(1).means("the two moment decay rates"),
      flag("fused", "null")
          .or_null()
          .means("one pass over all parameters (null: where there is one; false: LibTorch's loop per parameter)"),
  };
  return adam;
}

}  // namespace

// The optimizers (configs/optimizer/), PyTorch's semantics.
std::vector<Section> optimizer_sections() {
  Section sgd{"optimizer", "sgd", true, "optimizer=sgd: PyTorch's SGD", {}};
  sgd.options = {
      text("name", "sgd").means("the optimizer"),
      number("lr", "0.1").at_least(0).means("the learning rate"),
      number("momentum", "0.9").at_least(0).means("the momentum factor"),
      flag("nesterov", "true").means("Nesterov momentum (needs momentum > 0)"),
      number("weight_decay", "5.0e-4").at_least(0).means("L2 penalty"),
      flag("fused", "null")
          .or_null()
          .means("one pass over all parameters (null: where there is one; false: LibTorch's loop per parameter)"),
  };
  return {adam_like("adam", "0.0", "optimizer=adam: PyTorch's Adam"),
          adam_like("adamw", "0.01", "optimizer=adamw: PyTorch's AdamW"), sgd};
}

// The learning-rate schedules (configs/scheduler/).
std::vector<Section> scheduler_sections() {
  auto interval = [](const std::string& fallback) {
    return choice("interval", fallback, {"epoch", "step"}).means("whether the schedule advances per epoch or per step");
  };
  Section none{"scheduler",
               "none",
               true,
               "scheduler=none: a constant learning rate",
               {text("name", "none").means("the schedule")}};
  Section step{"scheduler", "step", true, "scheduler=step: PyTorch's StepLR", {}};
  step.options = {
      text("name", "step").means("the schedule"),
      integer("step_size", "10").at_least(1).means("epochs (or steps) between decays"),
      number("gamma", "0.1").above(0).means("the decay factor"),
      interval("epoch"),
  };
  Section cosine{"scheduler", "cosine", true, "scheduler=cosine: PyTorch's CosineAnnealingLR", {}};
  cosine.options = {
      text("name", "cosine").means("the schedule"),
      number("t_max", "${trainer.max_epochs}")
          .at_least(0)
          .or_minus_one()
          .computed()
          .means("PyTorch's T_max: epochs (or steps) from the rate down to eta_min, after which it rises again "
                 "(absent: trainer.max_epochs; 0 or -1: the whole run)"),
      number("eta_min", "0.0").at_least(0).means("the last learning rate"),
      interval("epoch"),
  };
  Section warmup{
      "scheduler", "warmup_cosine", true, "scheduler=warmup_cosine: linear warm-up, then cosine to eta_min", {}};
  warmup.options = {
      text("name", "warmup_cosine").means("the schedule"),
      integer("warmup_steps", "500").at_least(0).means("steps of linear warm-up"),
      number("eta_min", "0.0").at_least(0).means("the last learning rate"),
      interval("step"),
  };
  Section onecycle{"scheduler", "onecycle", true, "scheduler=onecycle: PyTorch's OneCycleLR", {}};
  onecycle.options = {
      text("name", "onecycle").means("the schedule"),
      number("max_lr", "${optimizer.lr}").above(0).computed().means("the peak learning rate (absent: optimizer.lr)"),
      number("pct_start", "0.3").above(0).below(1).means("share of the run spent rising"),
      number("div_factor", "25.0").above(0).means("the first learning rate is max_lr / div_factor"),
      number("final_div_factor", "10000.0").above(0).means("the last is the first / final_div_factor"),
      flag("cycle_momentum", "true")
          .means("momentum (sgd) or beta1 (adam, adamw) runs opposite the rate, from max_momentum down to "
                 "base_momentum at the peak and back, replacing optimizer.momentum or betas[0]"),
      number("base_momentum", "0.85").at_least(0).below(1).means("the momentum at the peak rate"),
      number("max_momentum", "0.95").at_least(0).below(1).means("the momentum at the first and last rates"),
      interval("step"),
  };
  return {none, step, cosine, warmup, onecycle};
}

}  // namespace trainer::options
