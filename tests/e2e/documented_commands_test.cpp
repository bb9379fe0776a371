// Every trainer command that README.md and docs/*.md show in a fenced block (a line starting
// `trainer fit|validate|test|predict|export|tune|data pack`, with its continuation lines) composes over the
// shipped configs: run through the shell as written (quotes, $HOME, backslash-newlines) with
// `--cfg job` appended, it exits 0. A key renamed, a group option removed or an example whose
// overrides do not fit its model fails here, naming the file and line. What a command refers to
// is made first: runs trained on Fashion-MNIST (runs/cnn), on .npy tensors and on a CSV table,
// so that an evaluation's `outputs/<run>` is a run of its block's data kind.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "e2e_support.h"
#include "subprocess.h"

namespace fs = std::filesystem;
using namespace trainer::testing;

namespace {

struct DocumentedCommand {
  std::string where;      // docs/data.md:15
  std::string text;       // as written, continuation lines included, comments removed
  std::string data_kind;  // the data= of the block's latest fit command ("" for the default)
  std::string error;      // the "Error: ..." line the block shows right after it, if any
};

std::vector<DocumentedCommand> documented_commands(const fs::path& file, const std::string& name) {
  static const std::regex comment(R"(\s+#.*$)");
  static const std::regex command(R"(^(\$ )?trainer (fit|validate|test|predict|export|tune|data pack)\b.*)");
  static const std::regex data_kind(R"(\bdata=(\w+))");
  std::vector<DocumentedCommand> commands;
  std::ifstream in(file);
  std::string line;
  bool in_block = false;
  bool continued = false;
  std::string block_kind;
  int after_command = 0;  // the line after the latest command's last one
  for (int number = 1; std::getline(in, line); ++number) {
    const size_t first = line.find_first_not_of(' ');
    if (first != std::string::npos && line.compare(first, 3, "```") == 0) {
      in_block = !in_block;
      continued = false;
      block_kind.clear();
      continue;
    }
    if (!in_block) continue;
    if (!continued && number == after_command && line.rfind("Error: ", 0) == 0) {
      commands.back().error = line;
    }
    const std::string text = std::regex_replace(line, comment, "");
    if (continued) {
      commands.back().text += "\n" + text;
    } else {
      const std::string trimmed = first == std::string::npos ? "" : text.substr(first);
      if (!std::regex_match(trimmed, command)) continue;
      commands.push_back({name + ":" + std::to_string(number), trimmed.substr(trimmed.rfind("trainer ", 2)), "", ""});
    }
    continued = !text.empty() && text.back() == '\\';
    if (continued) continue;
    after_command = number + 1;
    DocumentedCommand& last = commands.back();
    std::smatch kind;
    if (last.text.rfind("trainer fit", 0) == 0 && std::regex_search(last.text, kind, data_kind)) block_kind = kind[1];
    last.data_kind = block_kind;
  }
  return commands;
}

// A usage line rather than a command: `trainer fit|validate|test [flags] [overrides...]`.
bool usage_line(const std::string& text) {
  return text.find('|') != std::string::npos || text.find("...") != std::string::npos ||
         text.find("[flags]") != std::string::npos || text.find("[overrides") != std::string::npos;
}

void replace_all(std::string& text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
}

ProcessResult trainer_in(const fs::path& dir, std::vector<std::string> words) {
  words.insert(words.begin(), TRAINER_BINARY);
  for (const char* quiet :
       {"trainer.enable_progress_bar=false", "trainer.max_epochs=1", "trainer.limit_train_batches=2",
        "trainer.limit_val_batches=1", "trainer.num_sanity_val_steps=0", "test_after_fit=false"}) {
    words.push_back(quiet);
  }
  return run_process(words, dir.string());
}

}  // namespace

TEST_CASE("every trainer command shown in README.md and docs/ composes over the shipped configs") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path root(dir.path());

  // The runs the evaluation commands name, one per data kind their blocks train on.
  ProcessResult made = trainer_in(root, {"fit", "model=cnn", "hydra.run.dir=runs/cnn"});
  INFO(made.err);
  REQUIRE(made.exit_code == 0);
  std::string inputs, targets;
  for (int i = 0; i < 64; ++i) {
    for (int f = 0; f < 4; ++f) {
      const float value = static_cast<float>((i * 7 + f * 3) % 11) / 11.0f;
      inputs.append(reinterpret_cast<const char*>(&value), sizeof value);
    }
    const int64_t label = i % 3;
    targets.append(reinterpret_cast<const char*>(&label), sizeof label);
  }
  for (const std::string prefix : {"", "t"}) {
    write_npy(root / (prefix + "x.npy"), "<f4", {64, 4}, inputs);
    write_npy(root / (prefix + "y.npy"), "<i8", {64}, targets);
  }
  made = trainer_in(root, {"fit", "data=tensors", "data.inputs=x.npy", "data.targets=y.npy", "data.test_inputs=tx.npy",
                           "data.test_targets=ty.npy", "hydra.run.dir=runs/tensors"});
  INFO(made.err);
  REQUIRE(made.exit_code == 0);
  std::string table = "a,b,label\n";
  for (int i = 0; i < 64; ++i) {
    table += std::to_string(i % 7) + "," + std::to_string((i * 5) % 9) + "," + (i % 2 == 0 ? "even" : "odd") + "\n";
  }
  write_text(root / "train.csv", table);
  write_text(root / "test.csv", table);
  made = trainer_in(root, {"fit", "data=csv", "data.path=train.csv", "data.test_path=test.csv", "data.target=label",
                           "hydra.run.dir=runs/csv"});
  INFO(made.err);
  REQUIRE(made.exit_code == 0);

  const fs::path source(TRAINER_SOURCE_DIR);
  std::vector<DocumentedCommand> commands = documented_commands(source / "README.md", "README.md");
  for (const auto& entry : fs::directory_iterator(source / "docs")) {
    if (entry.path().extension() != ".md") continue;
    for (DocumentedCommand& command : documented_commands(entry.path(), "docs/" + entry.path().filename().string())) {
      commands.push_back(std::move(command));
    }
  }
  int checked = 0;
  for (const DocumentedCommand& command : commands) {
    if (usage_line(command.text)) continue;
    std::string text = command.text;
    const std::string run = command.data_kind == "tensors" || command.data_kind == "csv" ? command.data_kind : "cnn";
    replace_all(text, "outputs/<run>", "runs/" + run);
    replace_all(text, "CHECKPOINT", "runs/cnn/checkpoints/last.ckpt");
    if (text.find("--cfg") == std::string::npos) text += " --cfg job";
    const ProcessResult result = run_process({"/bin/sh", "-c", "trainer() { \"$TRAINER\" \"$@\"; }\n" + text},
                                             root.string(), {"TRAINER=" TRAINER_BINARY, "HOME=" + root.string()});
    INFO(command.where << ": " << text << "\nstderr: " << result.err);
    CHECK(result.exit_code == 0);
    check_no_crash(result);
    ++checked;
  }
  CHECK(checked >= 50);  // the reading found the commands
}

// The documented commands that train on the default data (Fashion-MNIST) on the CPU, run for real
// in the order each file shows them (an evaluation after the fit that made its run), cut to two
// batches: each ends as the docs say, with exit 0, or, where the block shows an "Error: ..." line
// after it, with a clean error that starts as that line does. Commands naming other data, files,
// a server or CUDA are left to their own e2e files (they compose in the case above).
TEST_CASE("the documented commands on the default data run as the docs say") {
  if (!engine_built()) return skip_test(kNoEngine, Skip::expected);
  TempDir dir;
  const fs::path root(dir.path());
  const fs::path source(TRAINER_SOURCE_DIR);
  std::vector<fs::path> files{source / "README.md"};
  for (const auto& entry : fs::directory_iterator(source / "docs")) {
    if (entry.path().extension() == ".md") files.push_back(entry.path());
  }
  std::sort(files.begin() + 1, files.end());
  int ran = 0;
  int refused = 0;
  for (const fs::path& file : files) {
    const std::string name = file == source / "README.md" ? "README.md" : "docs/" + file.filename().string();
    for (const DocumentedCommand& command : documented_commands(file, name)) {
      const std::string& text = command.text;
      bool elsewhere = usage_line(text) || text.find(" -m ") != std::string::npos ||
                       text.find("--cfg") != std::string::npos || text.find("-sc ") != std::string::npos;
      for (const char* other : {"data=", "data.", "model.path=", "accelerator=cuda", "http://", "hparams_search="}) {
        elsewhere = elsewhere || text.find(other) != std::string::npos;
      }
      if (elsewhere || !command.data_kind.empty() || text.find('<') != std::string::npos) continue;
      std::string line = text;
      // Every run in a directory of its own: two fits within one second would share
      // outputs/<date>/<time>.
      if (line.find("hydra.run.dir=") == std::string::npos) line += " hydra.run.dir=runs/line" + std::to_string(ran);
      line +=
          " trainer.max_epochs=1 trainer.limit_train_batches=2 trainer.limit_val_batches=1"
          " trainer.limit_test_batches=1 trainer.num_sanity_val_steps=0 trainer.enable_progress_bar=false";
      // A resnet cut to width 8 and batches of 16: README's `model=resnet precision=16` (bf16-mixed
      // on a CPU) took 160 s a step at width 64 on an AMD EPYC without bfloat16 arithmetic.
      if (text.find("model=resnet") != std::string::npos) line += " model.width=8 data.batch_size=16";
      const ProcessResult result = run_process({"/bin/sh", "-c", "trainer() { \"$TRAINER\" \"$@\"; }\n" + line},
                                               root.string(), {"TRAINER=" TRAINER_BINARY, "HOME=" + root.string()});
      INFO(command.where << ": " << line << "\nstderr: " << result.err);
      ++ran;
      if (command.error.empty()) {
        CHECK(result.exit_code == 0);
        check_no_crash(result);
        continue;
      }
      ++refused;
      check_clean_error(result);
      // The documented error's first words, up to its first path or quote (those differ here).
      const std::string documented = command.error.substr(0, command.error.find_first_of("/(\"'", 7));
      CHECK(result.err.find(documented) != std::string::npos);
    }
  }
  CHECK(ran >= 15);
  CHECK(refused >= 2);
}
