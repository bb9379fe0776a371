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
      section("mlflow").or_null().means("an MLflow tracking server or mlruns/ file store, below"),
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
  // Lightning's MLFlowLogger, keys as lightning-hydra-template's logger/mlflow.yaml writes them.
  Section mlflow{"logger.mlflow", "", true, "Lightning's MLFlowLogger", {}};
  mlflow.options = {
      choice("_target_", "null",
             {"lightning.pytorch.loggers.mlflow.MLFlowLogger", "lightning.pytorch.loggers.MLFlowLogger",
              "pytorch_lightning.loggers.mlflow.MLFlowLogger", "pytorch_lightning.loggers.MLFlowLogger"})
          .or_null()
          .means("Lightning's class (as Hydra configs name it); only the MLFlowLogger is run here"),
      text("experiment_name", "lightning_logs").means("the experiment the run goes to (made when missing)"),
      text("run_name", "null")
          .or_null()
          .means("the run's name (null: <sweep dir name>/<job> in a sweep, else the run directory's name)"),
      text("tracking_uri", "null")
          .or_null()
          .means("http(s)://host:port (a tracking server), file:<path> or a path (an mlruns/ file store); null: "
                 "$MLFLOW_TRACKING_URI, else save_dir"),
      text("save_dir", "./mlruns").means("the file store used when tracking_uri and $MLFLOW_TRACKING_URI are unset"),
      section("tags").or_null().means("the run's tags (a dict of names to values)"),
      text("prefix", "''").means("put before every metric name, joined with '-' (Lightning's LOGGER_JOIN_CHAR)"),
      text("artifact_location", "null").or_null().means("a new experiment's artifact location (null: the store's)"),
      text("run_id", "null").or_null().means("log to this existing run (made RUNNING again) instead of a new one"),
  };
  Section mlflow_tags{"logger.mlflow.tags", "", false, "the MLflow run's tags", {}};
  return {logger, csv, tensorboard, mlflow, mlflow_tags};
}

}  // namespace trainer::options
