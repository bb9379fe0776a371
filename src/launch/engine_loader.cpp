#include "trainer/launch/engine_loader.h"

#include <dlfcn.h>

#include <filesystem>
#include <vector>

#include "trainer/engine/engine_api.h"
#include "trainer/launch/config_locations.h"
#include "trainer/util/error.h"

namespace fs = std::filesystem;

namespace trainer::launch {
namespace {

template <typename Fn>
Fn symbol(void* handle, const char* name) {
  void* address = dlsym(handle, name);
  if (address == nullptr) {
    throw Error(TRAINER_ENGINE_LIBRARY, std::string("the engine library lacks ") + name,
                "Rebuild trainer (scripts/build.sh) so the binary and its engine match.");
  }
  return reinterpret_cast<Fn>(address);
}

}  // namespace

EngineLoader::EngineLoader() {
  const fs::path exe = executable_dir();
  // Next to the binary (the build tree), then the install's library directory.
  std::vector<fs::path> candidates = {exe / TRAINER_ENGINE_LIBRARY, exe / TRAINER_BIN_TO_LIBDIR / TRAINER_ENGINE_LIBRARY};
  if (fs::path(TRAINER_BIN_TO_LIBDIR) != fs::path("../lib")) candidates.push_back(exe / ".." / "lib" / TRAINER_ENGINE_LIBRARY);
  std::string tried;
  std::string last_error;
  for (const fs::path& candidate : candidates) {
    tried += (tried.empty() ? "" : ", ") + candidate.lexically_normal().string();
    std::error_code ec;
    if (!fs::exists(candidate, ec)) continue;
    handle_ = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle_ != nullptr) {
      entry_.describe = symbol<decltype(entry_.describe)>(handle_, "trainer_engine_describe");
      entry_.run = symbol<decltype(entry_.run)>(handle_, "trainer_engine_run");
      return;
    }
    last_error = dlerror();
  }
  if (!last_error.empty()) {
    throw Error(TRAINER_ENGINE_LIBRARY, "the training engine failed to load: " + last_error,
                "Install the LibTorch it was built against (scripts/setup.sh) or rebuild.");
  }
  throw Error(TRAINER_ENGINE_LIBRARY, "the training engine is not built (looked in " + tried + ")",
              "This binary was configured with TRAINER_LIBTORCH=none; build with "
              "scripts/build.sh --libtorch=debian (or wheel).");
}

EngineLoader::EngineLoader(const EngineEntry& in_process) : entry_(in_process) {
  if (entry_.describe == nullptr || entry_.run == nullptr) {
    throw Error("engine", "the in-process engine lacks its entry points",
                "Pass &trainer::kInProcessEngine (trainer/cli/in_process_engine.h) and link trainer::engine.");
  }
}

EngineLoader::~EngineLoader() {
  // The engine is never unloaded: LibTorch registers static state and threads that outlive
  // dlclose, and the process ends soon after a job anyway.
}

std::string EngineLoader::describe() const {
  return entry_.describe();
}

int EngineLoader::run(const std::string& command, const std::string& config_yaml,
                      const std::string& run_dir, const std::string& log_file,
                      std::string& message) const {
  TrainerJob job{command.c_str(), config_yaml.c_str(), run_dir.c_str(), log_file.c_str()};
  std::vector<char> buffer(4096, '\0');
  int code = entry_.run(&job, buffer.data(), buffer.size());
  message = buffer.data();
  return code;
}

}  // namespace trainer::launch
