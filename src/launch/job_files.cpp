#include "trainer/launch/job_files.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>

#include "trainer/config/yaml.h"
#include "trainer/launch/evaluation_run.h"
#include "trainer/util/error.h"

namespace fs = std::filesystem;

namespace trainer::launch {

void refuse_overwriting_run(const std::string& run_dir) {
  std::error_code ec;
  const fs::path checkpoints = fs::path(run_dir) / "checkpoints";
  for (const auto& entry : fs::directory_iterator(checkpoints, ec)) {
    if (entry.path().extension() != ".ckpt") continue;
    throw Error("hydra.run.dir=" + run_dir,
                "this directory already holds a training run (" + entry.path().string() +
                    "): a new fit would overwrite its last.ckpt and mix both runs' metrics",
                "Resume it with ckpt_path=last, evaluate it with trainer test ckpt_path=best hydra.run.dir=" + run_dir +
                    ", or give this fit a new hydra.run.dir (or delete the old run).");
  }
}

void refuse_overwriting_checkpoints(const std::string& checkpoint_dir, const std::string& key) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(checkpoint_dir, ec)) {
    if (entry.path().extension() != ".ckpt") continue;
    const std::optional<std::string> run = run_of_checkpoint_directory(checkpoint_dir);
    throw Error(key + " (checkpoint directory " + checkpoint_dir + ")",
                "this directory already holds checkpoints (" + entry.path().filename().string() +
                    (run ? " of the training run " + *run : std::string()) +
                    "): a new fit would replace their last.ckpt and add its own epoch files, and that run's "
                    "ckpt_path=best|last would then load this fit's model; nothing was written",
                (run ? "Resume that run with ckpt_path=last hydra.run.dir=" + *run
                     : std::string("Resume the run that wrote them with ckpt_path=last and its hydra.run.dir")) +
                    ", or give this fit another callbacks.model_checkpoint.dirpath (or delete the old checkpoints).");
  }
}

void write_job_files(const std::string& run_dir, const std::string& output_subdir, const config::Node& job_config,
                     const config::Node& hydra, const std::vector<std::string>& task_overrides) {
  std::error_code ec;
  fs::create_directories(run_dir, ec);
  if (ec) {
    throw Error(run_dir, "cannot create the output directory: " + ec.message(),
                "Set hydra.run.dir (or hydra.sweep.dir) to a writable place.");
  }
  if (output_subdir.empty()) return;
  const fs::path meta = fs::path(run_dir) / output_subdir;
  fs::create_directories(meta, ec);
  if (ec) throw Error(meta.string(), "cannot create directory: " + ec.message());

  write_file_atomically((meta / "config.yaml").string(), config::to_yaml(job_config));
  config::Node wrapped = config::Node::map();
  wrapped.set("hydra", hydra);
  write_file_atomically((meta / "hydra.yaml").string(), config::to_yaml(wrapped));
  config::Node overrides = config::Node::list();
  for (const std::string& text : task_overrides) overrides.push_back(config::Node::string(text));
  write_file_atomically((meta / "overrides.yaml").string(), config::to_yaml(overrides));
}

}  // namespace trainer::launch
