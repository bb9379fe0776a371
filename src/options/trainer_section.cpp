#include "trainer/options/sections.h"

namespace trainer::options {

// Lightning's Trainer arguments (shared/notes/lightning.md) with their Lightning meaning, plus
// trainer's own knobs. Defaults are those of configs/trainer/default.yaml.
std::vector<Section> trainer_sections() {
  Section trainer{"trainer", "", true, "Lightning's Trainer arguments: devices, loop limits, precision, checks", {}};
  trainer.options = {
      choice("accelerator", "auto", {"auto", "cpu", "gpu", "cuda"})
          .means("where the job runs (auto: CUDA when present)"),
      integer("devices", "1")
          .at_least(1)
          .or_words({"auto"})
          .means("processes per node (auto: one per CUDA device, else 1)"),
      integer("num_nodes", "1").at_least(1).means("nodes of a data-parallel job (torchrun / srun)"),
      choice("strategy", "auto", {"auto", "ddp", "single_device", "pipeline"})
          .means("ddp: one process per device; single_device: one process; pipeline: the model split into stages"),
      section("pipeline").means("strategy=pipeline: stages, split points, micro-batches, schedule, below"),
      choice("process_group_backend", "null", {"auto", "gloo", "nccl"})
          .or_null()
          .means("null: gloo on CPU, nccl on CUDA"),
      duration("dist_timeout", "\"00:00:30:00\"")
          .above(0)
          .means("how long a collective may wait (DD:HH:MM:SS or seconds)"),
      duration("hang_timeout", "\"00:00:05:00\"")
          .at_least(0)
          .or_null()
          .means("a rank silent or stuck this long ends the job with every rank's phase and step (0: never)"),
      number("bucket_cap_mb", "25").above(0).means("gradient bucket size of the all-reduce (MB)"),
      flag("sync_batchnorm", "false").means("synchronised batch norm under data parallel"),
      text("master_addr", "null")
          .or_null()
          .means("rank 0's host: under srun it replaces MASTER_ADDR or the step's first host; under torchrun it "
                 "must equal MASTER_ADDR; the ranks trainer starts bind Gloo to it (null: 127.0.0.1)"),
      integer("master_port", "null")
          .at_least(0)
          .at_most(65535)
          .or_null()
          .means("the rendezvous port under srun (null or 0: MASTER_PORT, or one drawn from the job ids); under "
                 "torchrun it must equal MASTER_PORT; the ranks trainer starts meet through a file, not a port"),
      choice("precision", "${precision}",
             {"32", "32-true", "64", "64-true", "16", "16-mixed", "bf16", "bf16-mixed", "16-true", "bf16-true"})
          .computed()
          .means("as the top-level precision (which it follows by default)"),
      flag("cpu_float16_autocast", "false")
          .means("precision=16-mixed on the CPU as float16 autocast instead of bf16-mixed"),
      section("grad_scaler").or_null().means("dynamic loss scaling (PyTorch's GradScaler), below"),
      integer("max_epochs", "10")
          .at_least(0)
          .or_minus_one()
          .means("epochs to train (-1: no limit, with max_steps or max_time)"),
      integer("min_epochs", "1")
          .at_least(0)
          .or_null()
          .means("epochs before early stopping or max_time may end the run"),
      integer("max_steps", "-1").at_least(1).or_minus_one().means("optimizer steps to train (-1: no limit)"),
      duration("max_time", "null").at_least(0).or_null().means("wall-clock limit DD:HH:MM:SS (null: none)"),
      limit("limit_train_batches", "1.0").means("share (float) or number (int) of training batches per epoch"),
      limit("limit_val_batches", "1.0").means("share or number of validation batches (0: no validation)"),
      limit("limit_test_batches", "1.0").means("share or number of test batches"),
      limit("limit_predict_batches", "1.0").means("share or number of batches trainer predict runs"),
      limit("val_check_interval", "1.0")
          .means("validate after this share of an epoch (float) or every N batches (int); not 0"),
      integer("check_val_every_n_epoch", "1").at_least(1).means("epochs between validations"),
      integer("num_sanity_val_steps", "2").at_least(0).or_minus_one().means("validation batches before fit (-1: all)"),
      integer("log_every_n_steps", "50").at_least(1).means("steps between logged rows"),
      integer("accumulate_grad_batches", "1").at_least(1).means("batches per optimizer step"),
      number("gradient_clip_val", "null")
          .at_least(0)
          .or_null()
          .means("clip gradients to this norm or value (null or 0: off, as in Lightning)"),
      choice("gradient_clip_algorithm", "norm", {"norm", "value"}).means("norm: total 2-norm; value: each element"),
      flag("deterministic", "false").means("deterministic algorithms only"),
      flag("benchmark", "null").or_null().means("cuDNN autotuning (null: off, as in Lightning 2.x)"),
      integer("fast_dev_run", "false")
          .at_least(0)
          .accepts_bool()
          .means("run N batches (true: 1) of train/val/test, no checkpoints or loggers"),
      limit("overfit_batches", "0").means("train and validate on this share or number of batches, unshuffled (0: off)"),
      flag("enable_progress_bar", "true").means("the progress bar on a terminal"),
      flag("enable_checkpointing", "true").means("the model checkpoint callback"),
      choice("profiler", "null", {"simple", "pytorch"})
          .or_null()
          .means("simple: time per phase; pytorch: a Chrome trace of LibTorch's operators (null: off)"),
      section("profiler_schedule").or_null().means("which steps the pytorch profiler records, below"),
      choice("auto_scale_batch_size", "null", {"power", "binsearch"})
          .or_null()
          .accepts_bool()
          .means("search the largest batch before fit (true: power, as Lightning 1.x)"),
      text("default_root_dir", "null")
          .or_null()
          .means("where checkpoints and loggers go when their own dirs are null (null: the run directory)"),
  };
  Section scaler{"trainer.grad_scaler", "", true, "dynamic loss scaling (PyTorch's GradScaler defaults)", {}};
  scaler.options = {
      flag("enabled", "null").or_null().means("null: on exactly for precision=16-mixed"),
      number("init_scale", "65536.0").above(0).means("the first scale (2^16)"),
      number("growth_factor", "2.0").above(1).means("scale multiplier after growth_interval finite steps"),
      number("backoff_factor", "0.5").above(0).below(1).means("scale multiplier after a step with inf/NaN gradients"),
      integer("growth_interval", "2000").at_least(1).means("finite steps before the scale grows"),
  };
  Section pipeline{"trainer.pipeline",
                   "",
                   true,
                   "strategy=pipeline: the model cut into stages, one process each (torchtitan's names)",
                   {}};
  pipeline.options = {
      integer("stages", "null")
          .at_least(2)
          .or_null()
          .means("pipeline degree (null: trainer.devices); devices / stages data-parallel replicas"),
      texts("split_points", "null")
          .or_null()
          .or_one_text()
          .means("module names where stages 2.. start (null: cut as balance says)"),
      choice("balance", "parameters", {"parameters", "time"})
          .means("with split_points null, what the stages share equally: parameters, or forward + backward time "
                 "measured on one micro-batch at start-up"),
      integer("microbatches", "null").at_least(1).or_null().means("micro-batches per batch (null: 2 x stages)"),
      choice("schedule", "1f1b", {"1f1b", "gpipe"})
          .means("1f1b: one forward one backward (at most stages micro-batches held); gpipe: all forwards first"),
      choice("transport", "auto", {"auto", "shared_memory", "process_group"})
          .means("how activations and gradients go between stages on the CPU: auto: shared memory between "
                 "stages on one host, else the process group; shared_memory: an error where it cannot be had; "
                 "process_group: always Gloo"),
  };
  Section schedule{"trainer.profiler_schedule", "", true, "steps the pytorch profiler records", {}};
  schedule.options = {
      integer("skip_first", "0").at_least(0).means("steps ignored first"),
      integer("wait", "1").at_least(0).means("steps waited before warm-up"),
      integer("warmup", "1").at_least(0).means("steps traced but discarded"),
      integer("active", "3").at_least(1).means("steps recorded"),
  };
  return {trainer, scaler, pipeline, schedule};
}

}  // namespace trainer::options
