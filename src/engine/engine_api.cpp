#include "trainer/engine/engine_api.h"

#include <malloc.h>
#include <sched.h>

#include <ATen/Parallel.h>

#include <cstring>
#include <exception>
#include <string>

#include "trainer/config/yaml.h"
#include "trainer/engine/dist_env.h"
#include "trainer/engine/export_command.h"
#include "trainer/engine/job_ranks.h"
#include "trainer/engine/runtime_info.h"
#include "trainer/engine/trainer.h"
#include "trainer/util/error.h"
#include "trainer/util/log.h"

namespace {

void copy_message(const std::string& text, char* out, size_t capacity) {
  if (out == nullptr || capacity == 0) return;
  size_t n = std::min(text.size(), capacity - 1);
  std::memcpy(out, text.data(), n);
  out[n] = '\0';
}

int usable_cores() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
  return 1;
}

// Start-up tuning measured on this kind of machine (shared/notes/libtorch.md): LibTorch starts
// with one intra-op thread on 2 cores, and glibc hands every step's activation buffers back to
// the OS (a page fault per 4 KiB); keeping them mapped took a CNN loop from ~1,320 to ~2,120
// samples/s.
std::string tune_runtime() {
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  const int cores = usable_cores();
  at::set_num_threads(cores);
  return "runtime tuning: " + std::to_string(cores) + " intra-op threads (cores available), malloc mmap "
         "threshold 32 MiB and trim threshold 1 GiB";
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) const char* trainer_engine_describe() {
  static const std::string text = trainer::engine::describe(trainer::engine::runtime_info());
  return text.c_str();
}

__attribute__((visibility("default"))) int trainer_engine_run(const TrainerJob* job,
                                                              char* error_message,
                                                              size_t error_capacity) {
  try {
    if (job == nullptr || job->command == nullptr || job->config_yaml == nullptr) {
      copy_message("engine: no job given", error_message, error_capacity);
      return 2;
    }
    if (job->log_file != nullptr && job->log_file[0] != '\0') trainer::log::set_file(job->log_file);
    if (trainer::engine::is_secondary_rank()) trainer::log::set_level(trainer::log::Level::kWarning);
    trainer::log::info(tune_runtime());
    trainer::log::info("engine: " + std::string(trainer_engine_describe()));
    trainer::engine::install_stop_signal_handlers();
    trainer::config::YamlDocument document =
        trainer::config::load_yaml_string(job->config_yaml, "<job config>");
    if (std::string(job->command) == "export") {
      trainer::engine::export_checkpoint(document.root, job->run_dir);
      return 0;
    }
    return trainer::engine::run_job_ranks(std::move(document.root), job->run_dir, job->config_yaml, job->command);
  } catch (const trainer::Error& e) {
    copy_message(e.what(), error_message, error_capacity);
    return 1;
  } catch (const std::exception& e) {
    copy_message(std::string("engine: ") + e.what(), error_message, error_capacity);
    return 1;
  }
}

}  // extern "C"
