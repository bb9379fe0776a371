#include "trainer/config/builtin_hydra_configs.h"

namespace trainer::config {

namespace {

// hydra/config: the shape of Hydra 1.3's HydraConf, with its defaults list (the groups first,
// `_self_` last, so that the body's `???` placeholders never erase what the groups set). Key
// order after composition equals Hydra's: run, sweep, launcher, sweeper, help, hydra_help,
// hydra_logging, job_logging, env, mode, searchpath, callbacks, output_subdir, overrides, job,
// runtime, verbose. `job.chdir: null` means "do not change directory", as in Hydra 1.2+.
constexpr std::string_view kHydraConfig = R"(defaults:
  - output: default
  - launcher: basic
  - sweeper: basic
  - help: default
  - hydra_help: default
  - hydra_logging: default
  - job_logging: default
  - callbacks: null
  - env: default
  - _self_
mode: null
searchpath: []
run:
  dir: ???
sweep:
  dir: ???
  subdir: ???
hydra_logging: ???
job_logging: ???
sweeper: ???
launcher: ???
callbacks: {}
help:
  app_name: ???
  header: ???
  footer: ???
  template: ???
hydra_help:
  hydra_help: ???
  template: ???
output_subdir: .hydra
overrides:
  hydra: []
  task: []
job:
  name: ???
  chdir: null
  override_dirname: ???
  id: ???
  num: ???
  config_name: ???
  env_set: {}
  env_copy: []
  config:
    override_dirname:
      kv_sep: '='
      item_sep: ','
      exclude_keys: []
runtime:
  version: ???
  version_base: ???
  cwd: ???
  config_sources: ???
  output_dir: ???
  choices: {}
verbose: false
)";

constexpr std::string_view kOutputDefault = R"(# @package hydra
run:
  dir: outputs/${now:%Y-%m-%d}/${now:%H-%M-%S}
sweep:
  dir: multirun/${now:%Y-%m-%d}/${now:%H-%M-%S}
  subdir: ${hydra.job.num}
)";

// Launchers (docs/sweeps.md). `basic` runs one job process at a time (Hydra's name kept);
// `local`/`joblib` run up to n_jobs job processes at once (-1: one per CPU), each with its share of
// the cores, and gpus_per_job devices each (CUDA_VISIBLE_DEVICES) when > 0; `slurm`/`submitit_slurm`
// submit a SLURM job array with submitit's option names (docs/slurm.md); their `wait` (trainer's
// addition): false submits and returns. fail_fast (trainer's addition): stop launching at the
// first failed job; `basic` holds exactly Hydra's keys (so --cfg hydra prints what Hydra prints),
// there it is added with +hydra.launcher.fail_fast=true.
constexpr std::string_view kLauncherBasic = R"(_target_: hydra._internal.core_plugins.basic_launcher.BasicLauncher
)";

constexpr std::string_view kLauncherLocal = R"(_target_: trainer.launcher.LocalLauncher
n_jobs: -1
gpus_per_job: 0
fail_fast: false
)";

constexpr std::string_view kLauncherJoblib =
    R"(_target_: hydra_plugins.hydra_joblib_launcher.joblib_launcher.JoblibLauncher
n_jobs: -1
backend: null
prefer: processes
require: null
verbose: 0
timeout: null
pre_dispatch: 2*n_jobs
batch_size: auto
temp_folder: null
max_nbytes: null
mmap_mode: r
fail_fast: false
)";

#define TRAINER_SLURM_LAUNCHER_BODY                    \
  "submitit_folder: ${hydra.sweep.dir}/.submitit/%j\n" \
  "timeout_min: 60\n"                                  \
  "cpus_per_task: null\n"                              \
  "gpus_per_node: null\n"                              \
  "tasks_per_node: 1\n"                                \
  "mem_gb: null\n"                                     \
  "nodes: 1\n"                                         \
  "name: ${hydra.job.name}\n"                          \
  "partition: null\n"                                  \
  "qos: null\n"                                        \
  "comment: null\n"                                    \
  "constraint: null\n"                                 \
  "exclude: null\n"                                    \
  "gres: null\n"                                       \
  "cpus_per_gpu: null\n"                               \
  "gpus_per_task: null\n"                              \
  "mem_per_gpu: null\n"                                \
  "mem_per_cpu: null\n"                                \
  "account: null\n"                                    \
  "signal_delay_s: 120\n"                              \
  "max_num_timeout: 0\n"                               \
  "additional_parameters: {}\n"                        \
  "array_parallelism: 256\n"                           \
  "setup: null\n"                                      \
  "srun_args: null\n"                                  \
  "wait: true\n"                                       \
  "fail_fast: false\n"

constexpr std::string_view kLauncherSlurm = "_target_: trainer.launcher.SlurmLauncher\n" TRAINER_SLURM_LAUNCHER_BODY;
constexpr std::string_view kLauncherSubmititSlurm =
    "_target_: hydra_plugins.hydra_submitit_launcher.submitit_launcher.SlurmLauncher\n" TRAINER_SLURM_LAUNCHER_BODY;
#undef TRAINER_SLURM_LAUNCHER_BODY

constexpr std::string_view kSweeperBasic = R"(_target_: hydra._internal.core_plugins.basic_sweeper.BasicSweeper
max_batch_size: null
params: null
)";

// Random search (docs/sweepers.md): num_samples jobs drawn from the sweeps' search spaces with a
// fixed, portable generator seeded by `seed`, so the same command gives the same jobs.
constexpr std::string_view kSweeperRandom = R"(_target_: trainer.sweeper.RandomSweeper
num_samples: 10
seed: 0
params: null
)";

// ASHA (asynchronous successive halving, as Ray Tune's ASHAScheduler): jobs drawn like random
// (or the grid when num_samples is null); the local launcher stops a job at a rung (grace_period *
// reduction_factor^k epochs) when its metric is not in the top 1/reduction_factor there.
// metric/mode null: the run's monitored metric and its mode (callbacks.model_checkpoint).
constexpr std::string_view kSweeperAsha = R"(_target_: trainer.sweeper.AshaSweeper
metric: null
mode: null
max_t: 100
grace_period: 1
reduction_factor: 4
num_samples: null
seed: 0
params: null
)";

// Hydra's Optuna sweeper (hydra-optuna-sweeper 1.2's config, unchanged), run by trainer's own
// TPE (docs/sweepers.md): trials asked for as slots free, the study kept in the sweep directory.
// metric and pruner are trainer's: the objective when optimized_metric is not set, and early stops
// (none, median, successive_halving, or Optuna's pruner classes). direction is null (Hydra's
// says minimize): the monitor's mode when the objective is the checkpoint's monitor, else minimize.
constexpr std::string_view kSweeperOptuna = R"(defaults:
  - sampler: tpe
_target_: hydra_plugins.hydra_optuna_sweeper.optuna_sweeper.OptunaSweeper
direction: null
storage: null
study_name: null
n_trials: 20
n_jobs: 2
max_failure_rate: 0.0
search_space: null
custom_search_space: null
params: null
metric: null
pruner: null
)";

constexpr std::string_view kSamplerTpe = R"(_target_: optuna.samplers.TPESampler
seed: null
consider_prior: true
prior_weight: 1.0
consider_magic_clip: true
consider_endpoints: false
n_startup_trials: 10
n_ei_candidates: 24
multivariate: false
warn_independent_sampling: true
)";

constexpr std::string_view kSamplerRandom = R"(_target_: optuna.samplers.RandomSampler
seed: null
)";

constexpr std::string_view kHelpDefault = R"(app_name: ${hydra.job.name}
header: |
  ${hydra.help.app_name} is powered by Hydra.
footer: |
  Powered by Hydra (https://hydra.cc)
  Use --hydra-help to view Hydra specific help
template: |
  ${hydra.help.header}
  == Configuration groups ==
  Compose your configuration from those groups (group=option)

  $APP_CONFIG_GROUPS

  == Config ==
  Override anything in the config (foo.bar=value)

  $CONFIG

  ${hydra.help.footer}
)";

constexpr std::string_view kHydraHelpDefault = R"(template: |
  Hydra (${hydra.runtime.version})
  See https://hydra.cc for more info.

  == Flags ==
  $FLAGS_HELP

  == Configuration groups ==
  Compose your configuration from those groups (For example, append hydra/job_logging=disabled to command line)

  $HYDRA_CONFIG_GROUPS

  Use '--cfg hydra' to Show the Hydra config.
)";

constexpr std::string_view kHydraLoggingDefault = R"(version: 1
formatters:
  simple:
    format: '[%(asctime)s][HYDRA] %(message)s'
handlers:
  console:
    class: logging.StreamHandler
    formatter: simple
    stream: ext://sys.stdout
root:
  level: INFO
  handlers:
  - console
loggers:
  logging_example:
    level: DEBUG
disable_existing_loggers: false
)";

// Hydra's hydra/hydra_logging/hydra_debug: Hydra's own debug log into a file.
constexpr std::string_view kHydraLoggingDebug = R"(version: 1
formatters:
  simple:
    format: '[%(asctime)s][%(name)s][%(levelname)s] - %(message)s'
handlers:
  file:
    class: logging.FileHandler
    mode: w
    formatter: simple
    filename: hydra-${hydra.job.name}.log
    delay: true
root:
  level: ERROR
  handlers:
  - file
loggers:
  hydra:
    level: DEBUG
disable_existing_loggers: false
)";

constexpr std::string_view kLoggingDisabled = R"(version: 1
root:
  level: ERROR
disable_existing_loggers: true
)";

constexpr std::string_view kLoggingNone = R"(version: 1
root: null
disable_existing_loggers: false
)";

constexpr std::string_view kJobLoggingDefault = R"(version: 1
formatters:
  simple:
    format: '[%(asctime)s][%(name)s][%(levelname)s] - %(message)s'
handlers:
  console:
    class: logging.StreamHandler
    formatter: simple
    stream: ext://sys.stdout
  file:
    class: logging.FileHandler
    formatter: simple
    filename: ${hydra.runtime.output_dir}/${hydra.job.name}.log
root:
  level: INFO
  handlers:
  - console
  - file
disable_existing_loggers: false
)";

constexpr std::string_view kJobLoggingStdout = R"(version: 1
formatters:
  simple:
    format: '[%(asctime)s][%(name)s][%(levelname)s] - %(message)s'
handlers:
  console:
    class: logging.StreamHandler
    formatter: simple
    stream: ext://sys.stdout
root:
  level: INFO
  handlers:
  - console
disable_existing_loggers: false
)";

// hydra-colorlog 1.2.0's hydra/hydra_logging/colorlog and hydra/job_logging/colorlog, which
// lightning-hydra-template's hydra/default.yaml selects: a Hydra user has them from that plugin.
constexpr std::string_view kHydraLoggingColorlog = R"(version: 1
formatters:
  colorlog:
    '()': colorlog.ColoredFormatter
    format: '[%(cyan)s%(asctime)s%(reset)s][%(purple)sHYDRA%(reset)s] %(message)s'
handlers:
  console:
    class: logging.StreamHandler
    formatter: colorlog
    stream: ext://sys.stdout
root:
  level: INFO
  handlers:
  - console
disable_existing_loggers: false
)";

constexpr std::string_view kJobLoggingColorlog = R"(version: 1
formatters:
  simple:
    format: '[%(asctime)s][%(name)s][%(levelname)s] - %(message)s'
  colorlog:
    '()': colorlog.ColoredFormatter
    format: '[%(cyan)s%(asctime)s%(reset)s][%(blue)s%(name)s%(reset)s][%(log_color)s%(levelname)s%(reset)s] - %(message)s'
    log_colors:
      DEBUG: purple
      INFO: green
      WARNING: yellow
      ERROR: red
      CRITICAL: red
handlers:
  console:
    class: logging.StreamHandler
    formatter: colorlog
    stream: ext://sys.stdout
  file:
    class: logging.FileHandler
    formatter: simple
    filename: ${hydra.job.name}.log
root:
  level: INFO
  handlers:
  - console
  - file
disable_existing_loggers: false
)";

}  // namespace

const std::vector<std::pair<std::string_view, std::string_view>>& builtin_hydra_configs() {
  static const std::vector<std::pair<std::string_view, std::string_view>> configs = {
      {"hydra/config", kHydraConfig},
      {"hydra/env/default", "{}\n"},
      {"hydra/help/default", kHelpDefault},
      {"hydra/hydra_help/default", kHydraHelpDefault},
      {"hydra/hydra_logging/colorlog", kHydraLoggingColorlog},
      {"hydra/hydra_logging/default", kHydraLoggingDefault},
      {"hydra/hydra_logging/disabled", kLoggingDisabled},
      {"hydra/hydra_logging/hydra_debug", kHydraLoggingDebug},
      {"hydra/hydra_logging/none", kLoggingNone},
      {"hydra/job_logging/colorlog", kJobLoggingColorlog},
      {"hydra/job_logging/default", kJobLoggingDefault},
      {"hydra/job_logging/disabled", kLoggingDisabled},
      {"hydra/job_logging/none", kLoggingNone},
      {"hydra/job_logging/stdout", kJobLoggingStdout},
      {"hydra/launcher/basic", kLauncherBasic},
      {"hydra/launcher/joblib", kLauncherJoblib},
      {"hydra/launcher/local", kLauncherLocal},
      {"hydra/launcher/slurm", kLauncherSlurm},
      {"hydra/launcher/submitit_slurm", kLauncherSubmititSlurm},
      {"hydra/output/default", kOutputDefault},
      {"hydra/sweeper/asha", kSweeperAsha},
      {"hydra/sweeper/basic", kSweeperBasic},
      {"hydra/sweeper/optuna", kSweeperOptuna},
      {"hydra/sweeper/random", kSweeperRandom},
      {"hydra/sweeper/sampler/random", kSamplerRandom},
      {"hydra/sweeper/sampler/tpe", kSamplerTpe},
  };
  return configs;
}

}  // namespace trainer::config
