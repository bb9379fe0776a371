#include "trainer/launch/tuned_config.h"

#include <filesystem>

#include "trainer/config/yaml.h"
#include "trainer/launch/job_files.h"
#include "trainer/util/error.h"

namespace fs = std::filesystem;

namespace trainer::launch {

bool searches_batch_size(const std::string& command, const config::Node& job_config) {
  if (command == "tune_batch_size") return true;
  if (command != "fit") return false;
  const config::Node* node = config::select(job_config, "trainer.auto_scale_batch_size");
  if (node == nullptr || node->is_null()) return false;
  return !(node->type() == config::NodeType::kBool && !node->as_bool());
}

void forget_earlier_search(const std::string& run_dir, const config::Node& job_config) {
  const config::Node* ckpt = config::select(job_config, "ckpt_path");
  if (ckpt != nullptr && !ckpt->is_null()) return;
  std::error_code ec;
  fs::remove(fs::path(run_dir) / kTuneResultFile, ec);
}

void record_tuned_batch_size(const std::string& run_dir, const std::string& output_subdir, config::Node& job_config,
                             long long batch_size) {
  config::Node* data = job_config.find("data");
  if (data == nullptr || !data->is_map()) {
    throw Error("data.batch_size", "the job config has no data section to take the batch size found",
                "Compose a data config (data=fashion_mnist or data=synthetic).");
  }
  data->set("batch_size", config::Node::integer(batch_size));
  if (!output_subdir.empty()) {  // hydra.output_subdir=null: no .hydra files, as in Hydra
    const fs::path meta = fs::path(run_dir) / output_subdir;
    std::error_code ec;
    fs::create_directories(meta, ec);
    write_file_atomically((meta / "config.yaml").string(), config::to_yaml(job_config));
  }
}

}  // namespace trainer::launch
