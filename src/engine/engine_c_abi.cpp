#include "trainer/engine/engine_c_abi.h"

#include <malloc.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include <ATen/Parallel.h>
#include <c10/util/Exception.h>

#include "trainer/config/config_view.h"
#include "trainer/config/yaml.h"
#include "trainer/data/datasets.h"
#include "trainer/engine/blas_threads.h"
#include "trainer/engine/callbacks/callback.h"
#include "trainer/engine/data_pack_command.h"
#include "trainer/engine/distributed/dist_env.h"
#include "trainer/engine/distributed/job_ranks.h"
#include "trainer/engine/export_command.h"
#include "trainer/engine/loggers/metric_logger.h"
#include "trainer/engine/runtime_info.h"
#include "trainer/engine/stop_signal.h"
#include "trainer/engine/trainer.h"
#include "trainer/engine/tuner/batch_size_trials.h"
#include "trainer/models/model_registry.h"
#include "trainer/options/option_reader.h"
#include "trainer/util/error.h"
#include "trainer/util/log.h"
#include "trainer/util/usable_cores.h"

namespace {

void copy_message(const std::string& text, char* out, size_t capacity) {
  if (out == nullptr || capacity == 0) return;
  size_t n = std::min(text.size(), capacity - 1);
  std::memcpy(out, text.data(), n);
  out[n] = '\0';
}

// Start-up tuning measured on this kind of machine (shared/notes/libtorch.md): LibTorch starts
// with one intra-op thread on 2 cores, and glibc hands every step's activation buffers back to
// the OS (a page fault per 4 KiB); keeping them mapped took a CNN loop from ~1,320 to ~2,120
// samples/s.
// OpenBLAS's own pthread pool, where LibTorch brought one in, goes down to one thread
// (blas_threads.h).
// Two diagnostic/benchmark knobs (bench/peer_bench.sh shows each tuning's effect with them):
//   TRAINER_MALLOC_TUNING=0       leave glibc's malloc thresholds at their defaults
//   TRAINER_INTRA_OP_THREADS=<n>  n intra-op threads instead of one per usable core; 0 = leave
//                                 LibTorch's own default
// The start-up log line says what was applied.
std::string tune_runtime() {
  std::string text = "runtime tuning: ";
  const char* threads_env = std::getenv("TRAINER_INTRA_OP_THREADS");
  if (threads_env != nullptr && threads_env[0] != '\0') {
    char* end = nullptr;
    const long n = std::strtol(threads_env, &end, 10);
    if (*end != '\0' || n < 0 || n > 4096) {
      throw trainer::Error("TRAINER_INTRA_OP_THREADS", "'" + std::string(threads_env) + "' is not a thread count",
                           "Set it to a whole number (0 = LibTorch's default), or unset it");
    }
    if (n > 0) at::set_num_threads(static_cast<int>(n));
    text += std::to_string(at::get_num_threads()) + " intra-op threads (" +
            (n > 0 ? "TRAINER_INTRA_OP_THREADS" : "LibTorch's default, TRAINER_INTRA_OP_THREADS=0") + ")";
  } else {
    const int cores = trainer::usable_cores();
    at::set_num_threads(cores);
    text += std::to_string(cores) + " intra-op threads (cores available)";
  }
  const char* malloc_env = std::getenv("TRAINER_MALLOC_TUNING");
  if (malloc_env != nullptr && std::string(malloc_env) == "0") {
    text += ", malloc tuning off (TRAINER_MALLOC_TUNING=0)";
  } else {
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    text += ", malloc mmap threshold 32 MiB and trim threshold 1 GiB";
  }
  const std::string blas = trainer::engine::limit_openblas_pool(at::get_num_threads());
  if (!blas.empty()) text += ", " + blas;
  return text;
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) int trainer_engine_abi_version() { return TRAINER_ENGINE_ABI_VERSION; }

__attribute__((visibility("default"))) const char* trainer_engine_describe() {
  static const std::string text = trainer::engine::describe(trainer::engine::runtime_info());
  return text.c_str();
}

__attribute__((visibility("default"))) const char* trainer_engine_registered(const char* kind) {
  thread_local std::string text;
  text.clear();
  const std::string which = kind == nullptr ? "" : kind;
  std::vector<std::string> names;
  if (which == "model") names = trainer::models::ModelRegistry::global().names();
  if (which == "dataset") names = trainer::data::DatasetRegistry::instance().names();
  if (which == "logger") names = trainer::engine::logger_registry().names();
  if (which == "callback") names = trainer::engine::callback_registry().names();
  for (const std::string& name : names) text += (text.empty() ? "" : ",") + name;
  return text.c_str();
}

__attribute__((visibility("default"))) int trainer_engine_run_job(const TrainerJob* job, TrainerJobResult* result) {
  if (result == nullptr) return 2;
  if (result->struct_size != sizeof(TrainerJobResult) || result->abi_version != TRAINER_ENGINE_ABI_VERSION) {
    result->exit_code = 2;  // the one field both sides agree on; the loader checks the version first
    return 2;
  }
  result->exit_code = 0;
  result->outcome = TRAINER_JOB_FINISHED;
  result->stop_signal = 0;
  result->tuned_batch_size = 0;
  result->message[0] = '\0';
  auto fail = [result](const std::string& text, int code) {
    copy_message(text, result->message, sizeof(result->message));
    result->exit_code = code;
    // A job that honoured SIGINT/SIGTERM ends with an error saying where its checkpoint is; the
    // stop itself is the flag the signal handler (or a peer rank, under data parallel) raised.
    const int signal = trainer::engine::stop_signal_received();
    result->outcome = signal != 0 ? TRAINER_JOB_INTERRUPTED : TRAINER_JOB_FAILED;
    result->stop_signal = signal;
    return code;
  };
  if (job == nullptr || job->command == nullptr || job->config_yaml == nullptr) return fail("engine: no job given", 2);
  // TRAINER_OPTION_READS=<file>: the option keys this job read, however it ends (option_reader.h).
  struct WriteKeysRead {
    ~WriteKeysRead() { trainer::options::write_keys_read(); }
  } write_keys_read;
  trainer::engine::forget_batch_size_found();
  std::string run_dir = job->run_dir != nullptr ? job->run_dir : "";
  // The batch a search found, or that a resumed fit took over from its first search.
  struct ReportBatch {
    TrainerJobResult* result;
    ~ReportBatch() { result->tuned_batch_size = trainer::engine::batch_size_found(); }
  } report_batch{result};
  try {
    if (job->log_file != nullptr && job->log_file[0] != '\0') trainer::log::set_file(job->log_file);
    if (trainer::engine::is_secondary_rank()) trainer::log::set_level(trainer::log::Level::kWarning);
    trainer::log::info(tune_runtime());
    trainer::log::info("engine: " + std::string(trainer_engine_describe()));
    trainer::engine::install_stop_signal_handlers();
    trainer::config::YamlDocument document = trainer::config::load_yaml_string(job->config_yaml, "<job config>");
    // Its line numbers are those of the resolved text the launcher sent, a file the user never sees:
    // errors name the key alone (model.path: ...), not "<job config>:31 (model.path)".
    document.root.set_origin_recursive(trainer::config::Origin{});
    const std::string command = job->command;
    if (command == "export") {
      trainer::engine::export_checkpoint(document.root, run_dir);
      return 0;
    }
    if (command == "data_pack") {
      trainer::engine::pack_shards(document.root, run_dir);
      return 0;
    }
    const int code = trainer::engine::run_job_ranks(std::move(document.root), run_dir, job->config_yaml, command);
    if (code != 0) return fail("the job failed (exit code " + std::to_string(code) + ")", code);
    return 0;
  } catch (const trainer::Error& e) {
    return fail(e.what(), 1);
  } catch (const c10::Error& e) {
    // A LibTorch check we did not anticipate with an error of our own: its message, not its C++
    // stack, which goes to the log file at debug level.
    trainer::log::debug(std::string("LibTorch's full message, with its C++ stack trace:\n") + e.what());
    return fail(std::string("engine: LibTorch refused an operation that trainer's own checks did not catch first: ") +
                    e.what_without_backtrace() +
                    ". This is a gap in trainer's checks: please report it with the command line; the run's "
                    "log has LibTorch's stack trace at debug level (hydra.verbose=true).",
                1);
  } catch (const std::exception& e) {
    return fail(std::string("engine: ") + e.what(), 1);
  }
}

}  // extern "C"
