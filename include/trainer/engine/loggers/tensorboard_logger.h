// logger.tensorboard: every logged metric as a TensorBoard scalar (tag = metric name, step = the
// optimizer step) in an event file under `save_dir` (default <run dir>/tensorboard).
#pragma once

#include <memory>
#include <string>

#include "trainer/engine/loggers/metric_logger.h"

namespace trainer::engine {

std::unique_ptr<MetricLogger> make_tensorboard_logger(const config::ConfigView& section, const std::string& run_dir);

}  // namespace trainer::engine
