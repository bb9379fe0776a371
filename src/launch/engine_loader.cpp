#include "trainer/launch/engine_loader.h"

#include <dlfcn.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <vector>

#include "trainer/engine/engine_c_abi.h"
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

// An engine built from other sources than this program fills other fields, or the same ones
// differently: refused before any job runs.
void check_abi_version(const EngineEntry& entry, const std::string& where) {
  const int version = entry.abi_version();
  if (version != TRAINER_ENGINE_ABI_VERSION) {
    throw Error(where,
                "the training engine speaks interface version " + std::to_string(version) + ", this program " +
                    std::to_string(TRAINER_ENGINE_ABI_VERSION),
                "Rebuild trainer (scripts/build.sh), or link the program against the trainer::engine installed with "
                "its trainer::cli, so the program and its engine come from the same build.");
  }
}

}  // namespace

EngineLoader::EngineLoader() {
  const fs::path exe = executable_dir();
  // Next to the binary (the build tree), then the install's library directory.
  std::vector<fs::path> candidates = {exe / TRAINER_ENGINE_LIBRARY,
                                      exe / TRAINER_BIN_TO_LIBDIR / TRAINER_ENGINE_LIBRARY};
  if (fs::path(TRAINER_BIN_TO_LIBDIR) != fs::path("../lib"))
    candidates.push_back(exe / ".." / "lib" / TRAINER_ENGINE_LIBRARY);
  std::string tried;
  std::string last_error;
  for (const fs::path& candidate : candidates) {
    tried += (tried.empty() ? "" : ", ") + candidate.lexically_normal().string();
    std::error_code ec;
    if (!fs::exists(candidate, ec)) continue;
    handle_ = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle_ != nullptr) {
      if (dlsym(handle_, "trainer_engine_abi_version") == nullptr) {
        throw Error(candidate.lexically_normal().string(),
                    "the training engine is older than this program (it has no interface version; it reports a job "
                    "as text)",
                    "Rebuild trainer (scripts/build.sh) so the binary and its engine match.");
      }
      entry_.abi_version = symbol<decltype(entry_.abi_version)>(handle_, "trainer_engine_abi_version");
      entry_.describe = symbol<decltype(entry_.describe)>(handle_, "trainer_engine_describe");
      entry_.run_job = symbol<decltype(entry_.run_job)>(handle_, "trainer_engine_run_job");
      check_abi_version(entry_, candidate.lexically_normal().string());
      entry_.registered = symbol<decltype(entry_.registered)>(handle_, "trainer_engine_registered");
      return;
    }
    last_error = dlerror();
  }
  if (!last_error.empty()) {
    // The loader's own words for what no reinstall mends.
    const bool out_of_files = last_error.find("Too many open files") != std::string::npos;
    const bool out_of_memory = last_error.find("Cannot allocate memory") != std::string::npos ||
                               last_error.find("failed to map segment") != std::string::npos;
    throw Error(TRAINER_ENGINE_LIBRARY, "the training engine failed to load: " + last_error,
                out_of_files    ? "The process may open too few files: raise the limit (ulimit -n, e.g. 1024)."
                : out_of_memory ? "The process has too little memory to map LibTorch: raise the limit (ulimit -v) or "
                                  "free memory."
                                : "Install the LibTorch it was built against (scripts/setup.sh) or rebuild.");
  }
  throw Error(TRAINER_ENGINE_LIBRARY, "the training engine is not built (looked in " + tried + ")",
              "This binary was configured with TRAINER_LIBTORCH=none; build with "
              "scripts/build.sh --libtorch=debian (or wheel).");
}

EngineLoader::EngineLoader(const EngineEntry& in_process) : entry_(in_process) {
  if (entry_.abi_version == nullptr || entry_.describe == nullptr || entry_.run_job == nullptr ||
      entry_.registered == nullptr) {
    throw Error("engine", "the in-process engine lacks its entry points",
                "Pass &trainer::kInProcessEngine (trainer/cli/in_process_engine.h) and link trainer::engine.");
  }
  check_abi_version(entry_, "the in-process engine (trainer::engine)");
}

EngineLoader::~EngineLoader() {
  // The engine is never unloaded: LibTorch registers static state and threads that outlive
  // dlclose, and the process ends soon after a job anyway.
}

std::string EngineLoader::describe() const { return entry_.describe(); }

std::vector<std::string> EngineLoader::registered(const std::string& kind) const {
  std::vector<std::string> names;
  const std::string text = entry_.registered(kind.c_str());
  size_t start = 0;
  while (start < text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    names.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return names;
}

EngineResult EngineLoader::run(const std::string& command, const std::string& config_yaml, const std::string& run_dir,
                               const std::string& log_file) const {
  TrainerJob job{command.c_str(), config_yaml.c_str(), run_dir.c_str(), log_file.c_str()};
  auto raw = std::make_unique<TrainerJobResult>();
  raw->struct_size = sizeof(TrainerJobResult);
  raw->abi_version = TRAINER_ENGINE_ABI_VERSION;
  raw->outcome = TRAINER_JOB_FAILED;
  entry_.run_job(&job, raw.get());
  return engine_result_of(*raw);
}

}  // namespace trainer::launch
