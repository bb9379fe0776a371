// The metrics each task logs beside its loss (classification: acc; data.task=regression: mae, rmse,
// r2), and the monitor the built-in callbacks watch under a regression. Torch-free: the engine and
// the sweep summary apply the same rule.
#pragma once

#include <string>
#include <string_view>

namespace trainer::options {

// Whether `name` is one of a regression's metrics ("val/rmse", "train/r2_epoch", ...).
bool is_regression_metric(std::string_view name);

// What a regression watches for `monitor`: an accuracy monitor (the default, val/acc, which a
// regression does not log) becomes the loss of the same split, lower being better ("val/acc" ->
// "val/loss", "train/acc_epoch" -> "train/loss_epoch"); empty when `monitor` stands as it is.
std::string regression_monitor_for(std::string_view monitor);

// The mode under which `monitor` improves: "max" for acc and r2, "min" for the loss, mae and rmse
// (of any split, per epoch or not); "" for a metric of another name.
std::string better_mode(std::string_view monitor);

}  // namespace trainer::options
