// A key that exists must do something: every declared option (src/options/) is read by the code
// that honours it. The real binary runs every model, dataset, optimizer and schedule with
// TRAINER_OPTION_READS set, and the keys its jobs read must cover the declarations. A key that
// is declared but never read fails this test by name.
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <catch2/catch.hpp>

#include "trainer/options/option_table.h"

#include "e2e_support.h"
#include "subprocess.h"

namespace fs = std::filesystem;
using namespace trainer::testing;

namespace {

std::vector<std::string> small(std::vector<std::string> argv) {
  for (const char* arg :
       {"data.batch_size=16", "trainer.max_epochs=1", "trainer.limit_train_batches=2", "trainer.limit_val_batches=2",
        "trainer.limit_test_batches=2", "trainer.num_sanity_val_steps=1", "trainer.enable_progress_bar=false"}) {
    argv.push_back(arg);
  }
  return argv;
}

std::set<std::string> lines_of(const fs::path& path) {
  std::set<std::string> lines;
  std::istringstream in(read_file(path));
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) lines.insert(line);
  }
  return lines;
}

}  // namespace

TEST_CASE("every declared option is read by the code that honours it") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const std::string reads = (fs::path(dir.path()) / "reads.txt").string();
  const std::vector<std::string> env = {"TRAINER_OPTION_READS=" + reads};
  auto run = [&](std::vector<std::string> argv, bool expect_success = true) {
    argv.insert(argv.begin(), TRAINER_BINARY);
    const ProcessResult result = run_process(argv, dir.path(), env);
    INFO(result.err);
    if (expect_success) {
      REQUIRE(result.exit_code == 0);
    } else {
      check_clean_error(result);
    }
  };
  // Every schedule, with SGD, the mlp, synthetic data, the tuner, the profiler schedule and the
  // device stats monitor.
  run(small({"fit", "-m", "scheduler=none,step,cosine,warmup_cosine,onecycle", "optimizer=sgd", "data=synthetic",
             "data.num_samples=96", "model.hidden_sizes=[8]", "+tuner.mode=power", "+trainer.profiler_schedule.wait=0",
             "+callbacks.device_stats_monitor.cpu_stats=true", "hydra.sweep.dir=schedules"}));
  // The image models on the real Fashion-MNIST (normalize, augment, root), with AdamW and Adam.
  run(small({"fit", "-m", "model=cnn,resnet", "optimizer=adamw", "hydra.sweep.dir=images"}));
  run(small({"fit", "data=synthetic", "data.num_samples=96", "hydra.run.dir=adam"}));
  // A 2-stage pipeline cut at a named module.
  run(small({"fit", "data=synthetic", "data.num_samples=96", "model.hidden_sizes=[8]", "trainer.devices=2",
             "trainer.strategy=pipeline", "trainer.pipeline.split_points=layers.4", "trainer.pipeline.microbatches=2",
             "trainer.pipeline.schedule=gpipe", "hydra.run.dir=pipeline"}));
  // logger=mlflow (its file store, in this directory) reads every key of logger.mlflow.
  run(small({"fit", "data=synthetic", "data.num_samples=96", "logger=mlflow", "+logger.mlflow.tags.team=vision",
             "hydra.run.dir=mlflow"}));
  // export reads format, export_path and ckpt_path.
  run({"export", "ckpt_path=last", "hydra.run.dir=adam"});
  // An image folder: two classes of small gray PGM files written here, decoded to RGB.
  for (const char* label : {"a", "b"}) {
    fs::create_directories(fs::path(dir.path()) / "folder" / label);
    for (int i = 0; i < 6; ++i) {
      std::ofstream pgm(fs::path(dir.path()) / "folder" / label / (std::to_string(i) + ".pgm"), std::ios::binary);
      pgm << "P5\n10 12\n255\n" << std::string(120, static_cast<char>(label[0] == 'a' ? 40 + i : 200 - i));
    }
  }
  run(small({"fit", "data=image_folder", "data.root=folder", "data.image_size=8", "data.augment=imagenet",
             "data.on_bad_sample=skip", "data.batch_size=4", "data.transforms.eval=[{resize: 9}, {center_crop: 8}]",
             "hydra.run.dir=images_folder"}));
  // predict reads predict.top_k (and the folder's images again, named by the checkpoint's classes).
  run({"predict", "ckpt_path=last", "hydra.run.dir=images_folder", "predict.top_k=2"});
  // data=tensors: .npy files of 40 float32 rows of 6 values and their labels, with a test split.
  std::string values(40 * 6 * 4, '\0');
  std::string labels(40, '\0');
  for (size_t i = 0; i < values.size(); i += 4) values[i + 2] = static_cast<char>(i % 7);  // small floats
  for (size_t i = 0; i < labels.size(); ++i) labels[i] = static_cast<char>(i % 3);
  write_npy(fs::path(dir.path()) / "x.npy", "<f4", {40, 6}, values);
  write_npy(fs::path(dir.path()) / "y.npy", "|u1", {40}, labels);
  run(small({"fit", "data=tensors", "data.inputs=x.npy", "data.targets=y.npy", "data.test_inputs=x.npy",
             "data.test_targets=y.npy", "data.num_classes=4", "data.normalize.std=2", "hydra.run.dir=tensors"}));
  // data=csv: a table with a category and string labels, tab-separated under a .txt name.
  {
    std::ofstream table(fs::path(dir.path()) / "t.txt");
    table << "size\tcolour\tlabel\n";
    for (int i = 0; i < 40; ++i)
      table << i % 5 << "\t" << (i % 2 == 0 ? "red" : "blue") << "\t" << (i % 3 == 0 ? "a" : "b") << "\n";
  }
  run(small({"fit", "data=csv", "data.path=t.txt", "data.test_path=t.txt", "data.target=label",
             "data.features=[size,colour]", "data.categorical=[colour]", "data.delimiter='\\t'",
             "data.standardize=false", "data.num_classes=2", "hydra.run.dir=csv"}));
  // data=webdataset: a tar shard of 12 small gray PGM files and their .cls labels, written by GNU tar.
  {
    const fs::path src = fs::path(dir.path()) / "shard_src";
    fs::create_directories(src);
    for (int i = 0; i < 12; ++i) {
      std::ofstream(src / ("k" + std::to_string(i) + ".pgm"), std::ios::binary)
          << "P5\n10 12\n255\n"
          << std::string(120, static_cast<char>(i % 2 == 0 ? 40 + i : 200 - i));
      std::ofstream(src / ("k" + std::to_string(i) + ".cls")) << i % 2;
    }
    const ProcessResult tar = run_process(
        {"/usr/bin/tar", "--sort=name", "-cf", (fs::path(dir.path()) / "shard.tar").string(), "-C", src.string(), "."});
    REQUIRE(tar.exit_code == 0);
  }
  run(small({"fit", "data=webdataset", "data.shards=shard.tar", "data.val_shards=shard.tar",
             "data.test_shards=[shard.tar]", "data.shuffle_buffer=5", "data.label_key=null", "data.num_classes=2",
             "data.image_size=8", "data.batch_size=4", "hydra.run.dir=shards"}));
  // trainer data pack reads the pack section (its flags) and the data's keys, here the table's.
  run({"data", "pack", "--split", "val", "-o", "packed/val-%d.tar", "--maxcount", "3", "--maxsize", "1M",
       "--no-shuffle", "data=csv", "data.path=t.txt", "data.target=label", "data.categorical=[colour]",
       "data.delimiter='\\t'", "hydra.run.dir=pack"});
  // A TorchScript model whose file is missing: its keys are read before the load fails cleanly.
  run(small({"fit", "model=torchscript", "model.path=missing.pt", "data=synthetic", "hydra.run.dir=ts"}), false);

  const std::set<std::string> read = lines_of(reads);
  std::set<std::string> read_anywhere;  // "data.batch_size" for "data[synthetic].batch_size"
  for (const std::string& key : read) {
    const size_t open = key.find('[');
    read_anywhere.insert(open == std::string::npos ? key : key.substr(0, open) + key.substr(key.find(']') + 1));
  }
  std::string unread;
  int declared = 0;
  for (const trainer::options::Section& section : trainer::options::sections()) {
    for (const trainer::options::Option& option : section.options) {
      // A section entry is honoured through its own keys, which are checked themselves.
      if (option.type == trainer::options::Type::kMap) continue;
      ++declared;
      const std::string plain = (section.path.empty() ? "" : section.path + ".") + option.key;
      // The "*" sections (a registered dataset or model) are read by the same lines as the
      // built-ins' keys of the same name.
      const bool found = section.variant == "*"
                             ? read_anywhere.count(plain) > 0
                             : read.count(section.path + (section.variant.empty() ? "" : "[" + section.variant + "]") +
                                          "." + option.key) > 0;
      if (!found) unread += "\n  " + section.path + "[" + section.variant + "]." + option.key;
    }
  }
  INFO("declared but never read:" << unread);
  CHECK(unread.empty());
  CHECK(declared > 150);
}
