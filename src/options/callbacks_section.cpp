#include "trainer/options/sections.h"

namespace trainer::options {

// The built-in callbacks (configs/callbacks/default.yaml). `callbacks` itself is open: a program
// built on trainer registers callbacks of its own by name.
std::vector<Section> callbacks_sections() {
  Section callbacks{"callbacks", "", false, "the callbacks (each key names a registered callback)", {}};
  callbacks.options = {
      section("model_checkpoint").or_null().means("Lightning's ModelCheckpoint, below"),
      section("early_stopping").or_null().means("Lightning's EarlyStopping, below"),
      section("lr_monitor").or_null().means("Lightning's LearningRateMonitor, below"),
      section("device_stats_monitor").or_null().means("Lightning's DeviceStatsMonitor, below"),
  };
  Section checkpoint{"callbacks.model_checkpoint", "", true, "Lightning's ModelCheckpoint", {}};
  checkpoint.options = {
      text("dirpath", "${paths.output_dir}/checkpoints")
          .or_null()
          .computed()
          .means("where checkpoints go (null: <default_root_dir or run>/checkpoints)"),
      text("filename", "epoch_{epoch:03d}")
          .means("the best files' names: {epoch}, {step} ({epoch:03d}) and the metrics ({val/acc:.4f}), no '/'"),
      choice("monitor", "val/acc",
             {"val/acc", "val/loss", "train/acc", "train/loss", "val/mae", "val/rmse", "val/r2", "train/mae",
              "train/rmse", "train/r2"})
          .means("the metric that ranks checkpoints (mae, rmse, r2: data.task=regression only)"),
      choice("mode", "max", {"max", "min"}).means("whether a higher or lower monitored value is better"),
      integer("save_top_k", "1").at_least(-1).means("best files kept (-1: all, 0: none)"),
      flag("save_last", "true").means("also keep last.ckpt (what ckpt_path=last resumes)"),
      integer("every_n_train_steps", "null")
          .at_least(0)
          .or_null()
          .means("also check every N optimizer steps (null or 0: off)"),
      integer("every_n_epochs", "1").at_least(1).means("epochs between checks"),
      flag("save_on_train_epoch_end", "null")
          .or_null()
          .means("true: at each training epoch's end only; false: after validations only; null: after validation, else "
                 "at the epoch's end"),
  };
  Section stopping{"callbacks.early_stopping", "", true, "Lightning's EarlyStopping", {}};
  stopping.options = {
      choice("monitor", "val/acc",
             {"val/acc", "val/loss", "train/acc_epoch", "train/loss_epoch", "val/mae", "val/rmse", "val/r2",
              "train/mae_epoch", "train/rmse_epoch", "train/r2_epoch"})
          .means("the metric watched (mae, rmse, r2: data.task=regression only)"),
      choice("mode", "max", {"max", "min"}).means("whether a higher or lower value is an improvement"),
      integer("patience", "100").at_least(0).means("checks without improvement before stopping"),
      number("min_delta", "0.0").means("the least change that counts as an improvement (its absolute value)"),
      flag("check_finite", "true").means("stop when the metric becomes NaN or infinite"),
      number("stopping_threshold", "null").or_null().means("stop once the metric is at least this good"),
      number("divergence_threshold", "null").or_null().means("stop once the metric is worse than this"),
  };
  Section lr{"callbacks.lr_monitor", "", true, "Lightning's LearningRateMonitor", {}};
  lr.options = {
      choice("logging_interval", "epoch", {"epoch", "step"})
          .or_null()
          .means("epoch, step, or null: as the scheduler steps"),
  };
  Section stats{"callbacks.device_stats_monitor", "", true, "Lightning's DeviceStatsMonitor", {}};
  stats.options = {
      flag("cpu_stats", "true").means("host RSS and CPU share"),
      flag("nvml", "true").means("the GPU's NVML readings (utilisation, memory, temperature, power)"),
  };
  return {callbacks, checkpoint, stopping, lr, stats};
}

// The built-in loggers (configs/logger/). `logger` itself is open for registered loggers.
std::vector<Section> logger_sections() {
  Section logger{"logger", "", false, "the metric loggers (each key names a registered logger)", {}};
  logger.options = {
      section("csv").or_null().means("metrics.csv, below"),
      section("tensorboard").or_null().means("TensorBoard event files, below"),
  };
  Section csv{"logger.csv", "", true, "Lightning's CSVLogger", {}};
  csv.options = {
      text("save_dir", "${paths.output_dir}").or_null().computed().means("the directory (absent: the run directory)"),
      text("name", "metrics.csv").means("the file name"),
  };
  Section tensorboard{"logger.tensorboard", "", true, "Lightning's TensorBoardLogger", {}};
  tensorboard.options = {
      text("save_dir", "${paths.output_dir}/tensorboard")
          .or_null()
          .computed()
          .means("the directory (absent: <run>/tensorboard)"),
  };
  return {logger, csv, tensorboard};
}

}  // namespace trainer::options
