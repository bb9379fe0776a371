#include "trainer/engine/engine_api.h"

#include <cstring>
#include <exception>
#include <string>

#include "trainer/engine/runtime_info.h"

namespace {

void copy_message(const std::string& text, char* out, size_t capacity) {
  if (out == nullptr || capacity == 0) return;
  size_t n = std::min(text.size(), capacity - 1);
  std::memcpy(out, text.data(), n);
  out[n] = '\0';
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
    if (job == nullptr || job->command == nullptr) {
      copy_message("engine: no job given", error_message, error_capacity);
      return 2;
    }
    // The training loop arrives with the engine issue; until then a job checks that LibTorch
    // loads and reports what it runs on.
    copy_message(std::string("trainer ") + job->command +
                     ": the training engine is not built yet; the composed config is above. " +
                     "Engine: " + trainer_engine_describe(),
                 error_message, error_capacity);
    return 0;
  } catch (const std::exception& e) {
    copy_message(e.what(), error_message, error_capacity);
    return 1;
  }
}

}  // extern "C"
