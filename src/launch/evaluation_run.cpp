#include "trainer/launch/evaluation_run.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "trainer/config/config_diff.h"
#include "trainer/config/interpolation.h"
#include "trainer/config/python_str.h"
#include "trainer/config/sweep_expansion.h"
#include "trainer/config/yaml.h"
#include "trainer/formats/checkpoint_file.h"
#include "trainer/launch/job_files.h"
#include "trainer/options/option_table.h"
#include "trainer/tracking/mlflow_store.h"
#include "trainer/util/error.h"
#include "trainer/util/home_path.h"
#include "trainer/util/lies_within.h"
#include "trainer/util/log.h"
#include "trainer/util/same_file.h"

namespace fs = std::filesystem;
using trainer::config::Node;

namespace trainer::launch {

// The seed too: it draws the validation split (data.val_fraction), so another seed would validate on
// samples the model trained on.
const std::vector<std::string> kSettingsFromCheckpoint = {"model", "data", "precision", "seed"};

bool is_evaluation_command(const std::string& command) {
  return command == "validate" || command == "test" || command == "predict" || command == "export";
}

namespace {

bool present(const fs::path& path) {
  std::error_code ec;
  return fs::exists(path, ec);
}

// A directory that holds a run's records: an evaluation never writes into it.
bool holds_a_run(const fs::path& dir) { return present(dir / ".hydra") || present(dir / "checkpoints"); }

// The training run a checkpoint file belongs to (<run>/checkpoints/x.ckpt, or dirpath=<run>).
std::optional<fs::path> run_of_checkpoint(const fs::path& checkpoint) {
  if (auto run = run_of_checkpoint_directory(checkpoint.parent_path().string())) return fs::path(*run);
  return std::nullopt;
}

// <parent>/<command>_<YYYY-mm-dd_HH-MM-SS>, with _1, _2, ... when that exists already.
fs::path fresh_dir(const fs::path& parent, const std::string& command, std::optional<long long> now) {
  const std::time_t seconds = now ? static_cast<std::time_t>(*now) : std::time(nullptr);
  std::tm local{};
  localtime_r(&seconds, &local);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "%Y-%m-%d_%H-%M-%S", &local);
  const std::string name = command + "_" + stamp;
  fs::path candidate = parent / name;
  for (int i = 1; present(candidate); ++i) candidate = parent / (name + "_" + std::to_string(i));
  return candidate;
}

std::string resolved_string(const Node& config, const std::string& path, const config::ResolveContext& ctx) {
  const Node value = config::resolve_path(config, path, ctx);
  if (value.is_null()) return {};
  if (value.is_string()) return value.as_string();
  return config::python_str(value);
}

// The section a key belongs to: "data" for data.batch_size, +data.x, data=..., data/augment=...
std::string section_of(const std::string& key) {
  const size_t end = key.find_first_of("./@");
  return key.substr(0, end);
}

// Sets `value` at the dotted `path` below `root`, creating maps on the way.
void set_path(Node& root, const std::string& path, Node value) {
  std::vector<std::string> segments;
  if (!config::split_key_path(path, segments) || segments.empty()) return;
  Node* node = &root;
  for (size_t i = 0; i + 1 < segments.size(); ++i) {
    Node* next = node->find(segments[i]);
    if (next == nullptr || !next->is_map()) next = &node->set(segments[i], Node::map());
    node = next;
  }
  node->set(segments.back(), std::move(value));
}

void erase_path(Node& root, const std::string& path) {
  const size_t dot = path.rfind('.');
  Node* parent = dot == std::string::npos ? &root : config::select(root, path.substr(0, dot));
  if (parent != nullptr && parent->is_map()) parent->erase(dot == std::string::npos ? path : path.substr(dot + 1));
}

std::string short_value(const Node* node) {
  if (node == nullptr) return "(absent)";
  if (node->is_map()) {
    const Node* name = node->find("name");
    return name != nullptr && name->is_scalar() ? config::python_str(*name) : "{...}";
  }
  return config::python_str(*node);
}

// The directory a training run started in: its .hydra/hydra.yaml's hydra.runtime.cwd.
std::optional<fs::path> working_directory_of(const std::optional<std::string>& run) {
  if (!run) return std::nullopt;
  const fs::path file = fs::path(*run) / ".hydra" / "hydra.yaml";
  if (!present(file)) return std::nullopt;
  try {
    const config::YamlDocument record = config::load_yaml_file(file.string());
    const Node* cwd = config::select(record.root, "hydra.runtime.cwd");
    if (cwd != nullptr && cwd->is_string() && fs::path(cwd->as_string()).is_absolute()) return cwd->as_string();
  } catch (const Error&) {
    // A damaged record: paths stay as the checkpoint has them.
  }
  return std::nullopt;
}

// A relative file path of the checkpoint's config, read in the training run's working directory
// (what it named there), unless it is not a plain path (an interpolation, ~, a URL or a pipe).
bool rebase(Node& value, const fs::path& cwd) {
  if (!value.is_string()) return false;
  const std::string text = value.as_string();
  if (text.empty() || fs::path(text).is_absolute() || text[0] == '~' || text.find("${") != std::string::npos ||
      text.find("://") != std::string::npos || text.rfind("pipe:", 0) == 0) {
    return false;
  }
  value = Node::string((cwd / text).lexically_normal().string());
  return true;
}

// The checkpoint's relative data and model files (keys declared a_path()), not set on this command
// line, made absolute against the training run's working directory: evaluated from elsewhere,
// tx.npy is the file the run named, not another one that happens to share its name here.
void rebase_paths(Node& section_node, const std::string& section, const std::vector<const config::Override*>& set,
                  const fs::path& cwd, std::string& rebased) {
  if (!section_node.is_map()) return;
  const Node* name = section_node.find("name");
  const options::Section* declared =
      options::find_section(section, name != nullptr && name->is_string() ? name->as_string() : "");
  if (declared == nullptr) return;
  for (const options::Option& option : declared->options) {
    if (!option.file_path) continue;
    const std::string key = section + "." + option.key;
    if (std::any_of(set.begin(), set.end(), [&](const config::Override* o) { return o->key == key; })) continue;
    Node* value = section_node.find(option.key);
    if (value == nullptr) continue;
    bool changed = false;
    if (value->is_list()) {
      for (Node& item : value->items()) changed = rebase(item, cwd) || changed;
    } else {
      changed = rebase(*value, cwd);
    }
    if (changed) rebased += (rebased.empty() ? "" : ", ") + key;
  }
}

// A normalize step's values (a number or a list of numbers); nullopt for anything else.
std::optional<std::vector<double>> numbers_of(const Node* node) {
  if (node == nullptr) return std::nullopt;
  std::vector<double> values;
  for (const Node& item : node->is_list() ? node->items() : std::vector<Node>{*node}) {
    if (item.type() == config::NodeType::kInt) {
      values.push_back(static_cast<double>(item.as_int()));
    } else if (item.type() == config::NodeType::kFloat) {
      values.push_back(item.as_float());
    } else {
      return std::nullopt;
    }
  }
  return values;
}

// Other data picked on the command line (data=image_folder on a Fashion-MNIST checkpoint) comes
// with its own default normalization, which the model never saw: the checkpoint's is taken unless
// the command line sets data.normalize or data.transforms, and one it sets otherwise is warned of
// (a note beginning "not as trained").
void take_normalization(Node& composed, const Node& stored_data, const std::vector<config::Override>& overrides,
                        std::vector<std::string>& notes) {
  // A normalize step among the trained transforms is what the loader applied, not the key.
  const Node* trained = stored_data.find("normalize");
  if (const Node* lists = stored_data.find("transforms"); lists != nullptr && lists->is_map()) {
    for (const auto& list : lists->entries()) {
      if (!list.value.is_list()) continue;
      for (const Node& step : list.value.items()) {
        if (const Node* found = step.is_map() ? step.find("normalize") : nullptr; found != nullptr) trained = found;
      }
    }
  }
  Node* data = composed.find("data");
  if (trained == nullptr || !trained->is_map() || data == nullptr || !data->is_map() ||
      data->find("normalize") == nullptr) {
    return;
  }
  const auto text = [](const Node* normalize) {
    return "mean " + config::python_str(*normalize->find("mean")) + ", std " +
           config::python_str(*normalize->find("std"));
  };
  if (trained->find("mean") == nullptr || trained->find("std") == nullptr) return;
  bool normalize_set = false;
  bool transforms_set = false;
  for (const config::Override& o : overrides) {
    normalize_set = normalize_set || (!o.package && o.key.rfind("data.normalize", 0) == 0);
    transforms_set = transforms_set || (!o.package && o.key.rfind("data.transforms", 0) == 0);
  }
  if (transforms_set) return;  // the user's own steps
  if (!normalize_set) {
    Node carried = Node::map();  // lists, as an image folder's schema has them (a number is one value)
    for (const char* key : {"mean", "std"}) {
      const Node& value = *trained->find(key);
      Node list = Node::list();
      if (value.is_list()) {
        list = value;
      } else {
        list.push_back(value);
      }
      carried.set(key, std::move(list));
    }
    data->set("normalize", carried);
    notes.push_back("data.normalize from the checkpoint's config (" + text(&carried) +
                    "), the normalization its model was trained on");
    return;
  }
  const Node* now = data->find("normalize");
  if (!now->is_map() || now->find("mean") == nullptr || now->find("std") == nullptr) return;
  for (const char* key : {"mean", "std"}) {
    const auto was = numbers_of(trained->find(key));
    const auto is = numbers_of(now->find(key));
    if (!was || !is) return;
    const auto same = [&](size_t i, size_t j) { return std::abs((*was)[i] - (*is)[j]) <= 1e-6; };
    bool equal = was->size() == is->size() || was->size() == 1 || is->size() == 1;
    for (size_t i = 0; equal && i < std::max(was->size(), is->size()); ++i) {
      equal = same(was->size() == 1 ? 0 : i, is->size() == 1 ? 0 : i);
    }
    if (equal) continue;
    notes.push_back("not as trained: data.normalize here is " + text(now) + ", but the checkpoint's model was " +
                    "trained on inputs normalized with " + text(trained) +
                    ", so it sees its inputs scaled otherwise than in training. Drop the data.normalize "
                    "overrides to take the checkpoint's.");
    return;
  }
}

// Puts the checkpoint's model, data and precision into `composed`, except what an override on
// the command line set; says what it did in `notes`. `training_cwd`: where the training run
// started, against which the checkpoint's relative file paths are read.
void take_settings(Node& composed, const Node& stored, const std::vector<config::Override>& overrides,
                   const std::optional<fs::path>& training_cwd, std::vector<std::string>& notes) {
  std::string rebased;
  std::string taken;
  std::string kept;
  std::string ignored;
  for (const std::string& section : kSettingsFromCheckpoint) {
    const Node* from = stored.find(section);
    if (from == nullptr) continue;
    const config::Override* whole = nullptr;
    std::vector<const config::Override*> within;
    for (const config::Override& o : overrides) {
      // trainer.precision on the command line is the precision this evaluation runs in: the
      // checkpoint's top-level precision would contradict it (two keys, one setting).
      if (section == "precision" && !o.package && o.key == "trainer.precision") {
        whole = &o;
        continue;
      }
      if (section_of(o.key) != section || o.package) continue;
      if (o.key == section || o.key[section.size()] == '/') {
        whole = &o;
      } else {
        within.push_back(&o);
      }
    }
    if (whole != nullptr) {
      kept += (kept.empty() ? "" : ", ") + whole->text;
      if (section == "data") take_normalization(composed, *from, overrides, notes);
      continue;
    }
    Node merged = *from;
    // A table's checkpoint (data=csv) decides how rows become inputs and which column is the
    // target: these keys on the command line would be ignored by the engine, and the evaluation's
    // .hydra record would name values it did not use.
    const Node* trained_data = section == "data" ? from->find("name") : nullptr;
    const bool table = trained_data != nullptr && trained_data->is_string() && trained_data->as_string() == "csv";
    for (const config::Override* o : within) {
      const std::string rest = o->key.substr(section.size() + 1);
      if (table && (rest == "target" || rest == "task" || rest == "features" || rest == "categorical" ||
                    rest == "standardize")) {
        ignored += (ignored.empty() ? "" : ", ") + o->text;
        continue;
      }
      const Node* value = config::select(composed, o->key);
      if (o->kind == config::OverrideKind::kDelete || value == nullptr) {
        erase_path(merged, rest);
      } else {
        set_path(merged, rest, *value);
      }
      kept += (kept.empty() ? "" : ", ") + o->text;
    }
    if (training_cwd) rebase_paths(merged, section, within, *training_cwd, rebased);
    taken += (taken.empty() ? "" : ", ") + section + "=" + short_value(from);
    // hydra.yaml's record of the group options should name what runs: the checkpoint's model, not
    // the default this command composed (the option is the section's `name`, as for the shipped ones).
    if (Node* choice = config::select(composed, "hydra.runtime.choices." + section);
        choice != nullptr && from->is_map()) {
      if (const Node* name = from->find("name"); name != nullptr && name->is_string())
        *choice = Node::string(name->as_string());
    }
    composed.set(section, std::move(merged));
  }
  // A run that set trainer.precision itself (not through the top-level `precision` it defaults to)
  // trained its weights in that precision: take it too, unless this command line sets either.
  const Node* trained_in = config::select(stored, "trainer.precision");
  const bool linked = trained_in == nullptr || (trained_in->is_string() && trained_in->as_string() == "${precision}");
  if (!linked) {
    bool overridden = false;
    for (const config::Override& o : overrides) {
      overridden = overridden || (!o.package && (o.key == "precision" || o.key == "trainer" ||
                                                 o.key == "trainer.precision" || o.key.rfind("trainer/", 0) == 0));
    }
    if (!overridden) {
      set_path(composed, "trainer.precision", *trained_in);
      taken += (taken.empty() ? "" : ", ") + std::string("trainer.precision=") + short_value(trained_in);
    }
  }
  if (!taken.empty()) notes.push_back("from the checkpoint's config: " + taken);
  if (!kept.empty()) notes.push_back("from the command line instead: " + kept);
  if (!ignored.empty()) {
    notes.push_back(
        "ignored, the checkpoint's as trained (a table's checkpoint decides its target, task and "
        "input columns): " +
        ignored);
  }
  if (!rebased.empty()) {
    notes.push_back("the checkpoint's relative " + rebased + " read in the training run's working directory " +
                    training_cwd->string());
  }
}

// The checkpoint an evaluation loads (empty: ckpt_path not given) and the training run it
// belongs to, when known.
struct LocatedCheckpoint {
  fs::path checkpoint;
  std::optional<std::string> training_run;
};

LocatedCheckpoint locate_checkpoint(const Node& composed, const std::vector<config::Override>& overrides,
                                    const config::ResolveContext& context) {
  LocatedCheckpoint located;
  bool run_dir_given = false;
  for (const config::Override& o : overrides) run_dir_given = run_dir_given || o.key == "hydra.run.dir";
  const fs::path run_dir = fs::absolute(resolved_string(composed, "hydra.run.dir", context)).lexically_normal();
  const std::string wanted =
      composed.find("ckpt_path") != nullptr ? resolved_string(composed, "ckpt_path", context) : "";
  if (wanted == "best" || wanted == "last") {
    if (!run_dir_given) {
      throw Error("ckpt_path=" + wanted,
                  "ckpt_path=" + wanted + " names a checkpoint of a training run, but no run was given",
                  "Add hydra.run.dir=<the training run's directory>, or give the checkpoint's path: "
                  "ckpt_path=<run>/checkpoints/<file>.ckpt.");
    }
    // A sweep's directory holds its jobs' runs in numbered subdirectories, not a run of its own.
    if ((present(run_dir / ".sweep") || present(run_dir / "multirun.yaml")) && !present(run_dir / "checkpoints")) {
      throw Error("hydra.run.dir=" + run_dir.string(),
                  "this is a sweep's directory: its jobs' training runs are its numbered subdirectories (" +
                      (run_dir / "0").string() + ", ...), each with its own checkpoints",
                  "Give one job's directory: hydra.run.dir=" + (run_dir / "<job number>").string() +
                      " (its sweep_summary.md names the best job).");
    }
    located.checkpoint =
        formats::resolve_checkpoint_name(wanted, checkpoint_directory(composed, run_dir.string(), context));
    located.training_run = run_dir.string();
  } else if (!wanted.empty()) {
    // A word that names no file is a mistyped best or last (resolve_checkpoint_name says so).
    if (wanted.find_first_of("/.") == std::string::npos && !present(wanted)) {
      formats::resolve_checkpoint_name(wanted, checkpoint_directory(composed, run_dir.string(), context));
    }
    located.checkpoint = fs::absolute(wanted).lexically_normal();
    // <run>/checkpoints/best.ckpt: the best file that run recorded.
    if (located.checkpoint.filename() == "best.ckpt" && !present(located.checkpoint)) {
      located.checkpoint = formats::resolve_checkpoint_name("best", located.checkpoint.parent_path().string());
    }
    if (std::optional<fs::path> run = run_of_checkpoint(located.checkpoint)) located.training_run = run->string();
  }
  if (!located.checkpoint.empty()) located.checkpoint = fs::absolute(located.checkpoint).lexically_normal();
  return located;
}

// An evaluation writes only into its own directory: a logger's save_dir, the checkpoint dirpath or
// trainer.default_root_dir that resolves inside the training run but outside `own` would change
// the run's files (a row appended to its metrics.csv, an event file among its own).
void refuse_writing_into_run(const Node& composed, const fs::path& own, const fs::path& training_run,
                             const config::ResolveContext& ctx) {
  Node runtime_hydra = ctx.hydra != nullptr ? *ctx.hydra : Node::map();
  set_path(runtime_hydra, "runtime.output_dir", Node::string(own.string()));
  set_path(runtime_hydra, "run.dir", Node::string(own.string()));
  config::ResolveContext in_own = ctx;
  in_own.hydra = &runtime_hydra;
  // With hydra.job.chdir the job runs in its own directory: a relative path is read from there.
  const Node* chdir = config::select(composed, "hydra.job.chdir");
  const bool in_own_dir = chdir != nullptr && chdir->type() == config::NodeType::kBool && chdir->as_bool();
  const auto absolute = [&](const fs::path& path) {
    fs::path full = (path.is_absolute() ? path : (in_own_dir ? own : fs::current_path()) / path).lexically_normal();
    return full.has_filename() || full == full.root_path() ? full : full.parent_path();  // "run/" as "run"
  };
  // What the evaluation writes, by the key that names it: a logger's directory (and the csv
  // logger's file name within it), the checkpoint directory, the export, and its own records
  // (hydra.output_subdir, <hydra.job.name>.log) in `own` unless a name climbs out of it.
  struct Target {
    std::string key;    // what names it
    std::string value;  // the key's value, resolved as the evaluation resolves it
    fs::path path;      // where it writes
  };
  std::vector<Target> targets;
  const auto value_of = [&](const std::string& key) {
    return config::select(composed, key) == nullptr ? std::string() : resolved_string(composed, key, in_own);
  };
  if (const Node* loggers = composed.find("logger"); loggers != nullptr && loggers->is_map()) {
    for (const auto& entry : loggers->entries()) {
      if (!entry.value.is_map()) continue;
      const std::string key = "logger." + entry.key;
      // MLflow's file store writes where its tracking_uri (or the environment's) points, not
      // below save_dir; a server's URI writes nothing here.
      if (entry.value.find("tracking_uri") != nullptr) {
        std::string named = key + ".tracking_uri";
        std::string uri = value_of(named);
        if (const char* env = std::getenv("MLFLOW_TRACKING_URI"); uri.empty() && env != nullptr && *env != '\0') {
          named = "MLFLOW_TRACKING_URI (the environment's)";
          uri = env;
        }
        std::string lower = uri;
        for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        const bool server = lower.rfind("http://", 0) == 0 || lower.rfind("https://", 0) == 0;
        if (const std::string path = tracking::file_store_path(uri); !server && !path.empty()) {
          targets.push_back({named, uri, absolute(path)});
        }
      }
      if (entry.value.find("save_dir") == nullptr) continue;
      const std::string dir = value_of(key + ".save_dir");
      if (dir.empty()) continue;
      targets.push_back({key + ".save_dir", dir, absolute(dir)});
      if (const std::string name = entry.key == "csv" ? value_of(key + ".name") : ""; !name.empty()) {
        targets.push_back({key + ".name", name, absolute(fs::path(dir) / name)});
      }
    }
  }
  for (const char* key : {"callbacks.model_checkpoint.dirpath", "trainer.default_root_dir", "export_path"}) {
    if (const std::string value = value_of(key); !value.empty()) targets.push_back({key, value, absolute(value)});
  }
  if (const std::string subdir = value_of("hydra.output_subdir"); !subdir.empty() && subdir != "null") {
    targets.push_back({"hydra.output_subdir", subdir, (own / subdir).lexically_normal()});
  }
  if (const std::string name = value_of("hydra.job.name"); !name.empty()) {
    targets.push_back({"hydra.job.name", name, (own / (name + ".log")).lexically_normal()});
  }
  for (const Target& target : targets) {
    const std::string& key = target.key;
    const std::string& value = target.value;
    const fs::path& dir = target.path;
    if (!lies_within(dir, training_run) || lies_within(dir, own)) continue;
    if (key == "export_path") {
      // A new file the user names beside the run's is theirs, and so is an earlier export
      // (.safetensors) written again; the run's own records are not.
      std::error_code ec;
      if (!fs::exists(dir, ec) || fs::weakly_canonical(dir, ec).extension() == ".safetensors") continue;
      throw Error(key + "=" + value,
                  "the export would write over " + dir.string() + ", one of the files of the training run " +
                      training_run.string() +
                      " it exports (a checkpoint written over could never be resumed or evaluated again, a "
                      "metrics.csv would lose the run's records); nothing was written",
                  "Drop export_path (the export goes to " + own.string() +
                      "/<checkpoint name>.safetensors), or name a new file.");
    }
    throw Error(key + "=" + value,
                "this evaluation would write into " + dir.string() + ", inside the training run " +
                    training_run.string() + " it evaluates (outside its own directory " + own.string() +
                    "): it would change that run's files, e.g. add a row to its metrics.csv or an event file to "
                    "its TensorBoard logs; nothing was written",
                "Drop " + key + " (the evaluation writes into its own directory " + own.string() +
                    " by default), or name a directory outside the training run.");
  }
}

// A section's option as the checkpoint's config names it (its `name`), when the group has it.
std::optional<std::string> stored_option(const config::Composer& composer, const Node& stored,
                                         const std::string& section) {
  const Node* name = config::select(stored, section + ".name");
  if (name == nullptr || !name->is_string()) return std::nullopt;
  const auto options = composer.group_options(section);
  if (!options || std::find(options->begin(), options->end(), name->as_string()) == options->end()) return std::nullopt;
  return name->as_string();
}

}  // namespace

config::ComposeResult compose_evaluation(const config::Composer& composer, const std::string& command,
                                         const std::vector<config::Override>& overrides, config::RunMode mode) {
  if (!is_evaluation_command(command)) return composer.compose(overrides, mode);
  // The sections whose keys the command line overrides without picking the group's option.
  std::vector<std::string> sections;
  for (const std::string section : {"model", "data"}) {
    bool picked = false;
    bool within = false;
    for (const config::Override& o : overrides) {
      if (o.package || section_of(o.key) != section) continue;
      (o.key == section || o.key[section.size()] == '/' ? picked : within) = true;
    }
    if (within && !picked) sections.push_back(section);
  }
  if (sections.empty()) return composer.compose(overrides, mode);
  std::vector<config::Override> without_keys;
  for (const config::Override& o : overrides) {
    if (o.package || std::find(sections.begin(), sections.end(), section_of(o.key)) == sections.end()) {
      without_keys.push_back(o);
    }
  }
  config::ComposeResult first = composer.compose(without_keys, mode);
  config::ResolveContext ctx;
  ctx.hydra = first.config.find("hydra");
  const LocatedCheckpoint located = locate_checkpoint(first.config, overrides, ctx);
  if (located.checkpoint.empty()) return composer.compose(overrides, mode);
  const formats::CheckpointFile file = formats::read_checkpoint_summary(located.checkpoint.string());
  if (file.config_yaml.empty()) return composer.compose(overrides, mode);
  const Node stored = config::load_yaml_string(file.config_yaml, located.checkpoint.string() + " (its config)").root;
  std::vector<config::Override> with_options;
  for (const std::string& section : sections) {
    if (auto option = stored_option(composer, stored, section)) {
      with_options.push_back(config::parse_override(section + "=" + *option));
    }
  }
  if (with_options.empty()) return composer.compose(overrides, mode);
  const size_t added = with_options.size();
  with_options.insert(with_options.end(), overrides.begin(), overrides.end());
  config::ComposeResult result = composer.compose(with_options, mode);
  // The record names what the command line said; hydra.runtime.choices names the options used.
  if (Node* hydra = result.config.find("hydra"); hydra != nullptr) {
    std::vector<const config::Override*> task;
    Node task_list = Node::list();
    for (size_t i = added; i < with_options.size(); ++i) {
      if (config::is_hydra_override(with_options[i].text)) continue;
      task.push_back(&with_options[i]);
      task_list.push_back(Node::string(with_options[i].text));
    }
    set_path(*hydra, "overrides.task", std::move(task_list));
    set_path(*hydra, "job.override_dirname", Node::string(config::override_dirname(task, *hydra)));
  }
  return result;
}

CheckpointDirectory job_checkpoint_directory(const Node& config, const std::string& run_dir,
                                             const config::ResolveContext& ctx) {
  const fs::path run(run_dir);
  Node runtime_hydra = ctx.hydra != nullptr ? *ctx.hydra : Node::map();
  set_path(runtime_hydra, "runtime.output_dir", Node::string(run.string()));
  config::ResolveContext in_run = ctx;
  in_run.hydra = &runtime_hydra;
  CheckpointDirectory directory{(run / "checkpoints").lexically_normal().string(), "hydra.run.dir"};
  if (config::select(config, "trainer.default_root_dir") != nullptr) {  // where dirpath null puts them
    const std::string root = resolved_string(config, "trainer.default_root_dir", in_run);
    if (!root.empty())
      directory = {(fs::absolute(root) / "checkpoints").lexically_normal().string(), "trainer.default_root_dir"};
  }
  if (config::select(config, "callbacks.model_checkpoint.dirpath") != nullptr) {
    const std::string dirpath = resolved_string(config, "callbacks.model_checkpoint.dirpath", in_run);
    if (!dirpath.empty())
      directory = {fs::absolute(dirpath).lexically_normal().string(), "callbacks.model_checkpoint.dirpath"};
  }
  return directory;
}

std::optional<std::string> run_of_checkpoint_directory(const std::string& directory) {
  fs::path dir = fs::path(directory).lexically_normal();
  if (!dir.empty() && dir.filename().empty()) dir = dir.parent_path();  // a trailing '/'
  for (int up = 0; up < 2 && !dir.empty(); ++up, dir = dir.parent_path()) {
    if (present(dir / ".hydra" / "config.yaml")) return dir.string();
  }
  return std::nullopt;
}

std::string checkpoint_directory(const Node& composed, const std::string& run_dir, const config::ResolveContext& ctx) {
  // callbacks.model_checkpoint.dirpath (else trainer.default_root_dir) as it resolved in that run,
  // from the run's own .hydra/config.yaml when it has one (this command's config otherwise).
  const fs::path recorded = fs::path(run_dir) / ".hydra" / "config.yaml";
  if (present(recorded))
    return job_checkpoint_directory(config::load_yaml_file(recorded.string()).root, run_dir, ctx).path;
  return job_checkpoint_directory(composed, run_dir, ctx).path;
}

namespace {

// A resume writes into this run's checkpoint directory and metrics: the checkpoint directory must
// be this run's, and a directory holding this run's checkpoints takes only their continuation.
void refuse_resuming_into_another_run(const std::string& checkpoint, const CheckpointDirectory& writes,
                                      const std::string& run_dir) {
  const std::string& directory = writes.path;
  std::error_code ec;
  const fs::path dir = fs::weakly_canonical(fs::absolute(directory), ec);
  const fs::path run = fs::weakly_canonical(fs::absolute(run_dir), ec);
  if (const std::optional<std::string> owner = run_of_checkpoint_directory(directory);
      owner && fs::weakly_canonical(fs::absolute(*owner), ec) != run) {
    throw Error(writes.key + (writes.key == "hydra.run.dir" ? "=" + run_dir : "=" + directory),
                "holds the checkpoints of the training run " + *owner + ", not of hydra.run.dir=" + run_dir +
                    ": resuming would write this run's checkpoints among that run's (its ckpt_path=best|last would "
                    "then load this run's model) and record that directory as this run's; nothing was written",
                "Resume " + *owner + " with ckpt_path=last hydra.run.dir=" + *owner +
                    ", or drop callbacks.model_checkpoint.dirpath (checkpoints go to <hydra.run.dir>/checkpoints).");
  }
  if (lies_within(fs::absolute(checkpoint), dir)) return;  // this run's own checkpoint
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.path().extension() != ".ckpt") continue;
    throw Error("hydra.run.dir=" + run_dir,
                "already holds a training run (" + entry.path().string() + "), and ckpt_path=" + checkpoint +
                    " is another run's checkpoint: resuming it here would replace this run's last.ckpt with that "
                    "run's continuation and mix both runs' metrics.csv; nothing was written",
                "Resume that checkpoint's run in its own directory (ckpt_path=last hydra.run.dir=<its run>), or "
                "continue from it in a new hydra.run.dir (ckpt_path=" +
                    checkpoint + " hydra.run.dir=<a new directory>).");
  }
}

// A resume on other data or another seed trains on, but its validation split and batches are
// drawn from them: validation metrics and the best checkpoint then mix two splits. Said in one
// warning naming the keys (the loader's settings, which draw nothing, are left out).
void warn_about_other_data(const Node& stored, const Node& composed, const config::ResolveContext& ctx,
                           const std::string& wanted) {
  Node now = composed;
  now.erase("hydra");
  try {
    config::resolve_all(now, ctx);
  } catch (const std::exception&) {
    return;  // an interpolation of the run's directory: the engine's own checks follow
  }
  static const std::vector<std::string> drawing_nothing = {"data.batch_size", "data.num_workers", "data.pin_memory",
                                                           "data.prefetch_factor", "data.persistent_workers"};
  std::string listed;
  int shown = 0;
  for (const config::ValueDifference& d : config::config_differences(stored, now)) {
    if (d.key != "seed" && d.key.rfind("data.", 0) != 0) continue;
    if (std::find(drawing_nothing.begin(), drawing_nothing.end(), d.key) != drawing_nothing.end()) continue;
    if (shown++ < 4)
      listed += std::string(listed.empty() ? "" : "; ") + d.key + ": " + d.before + " then, " + d.after + " now";
  }
  if (shown == 0) return;
  if (shown > 4) listed += "; and " + std::to_string(shown - 4) + " more";
  log::warning("ckpt_path=" + wanted + ": this resume's data or seed differs from the run that wrote the checkpoint (" +
               listed +
               "): the validation split and the batches are drawn from them, so validation metrics and the best "
               "checkpoint now mix two splits; resume with the run's own values to continue it exactly");
}

// A validation whose command line sets another seed or data.val_fraction than the checkpoint's
// run draws another validation split from the training samples: it holds samples the model
// trained on, so its metrics read too well. Said in one warning naming the values (the
// validation runs: a separate val/ folder or file draws nothing, and a user may mean it).
void warn_about_redrawn_split(const Node& stored, const Node& composed, const config::ResolveContext& ctx) {
  Node now = composed;
  now.erase("hydra");
  try {
    config::resolve_all(now, ctx);
  } catch (const std::exception&) {
    return;  // the engine's own checks follow
  }
  std::string listed;
  for (const config::ValueDifference& d : config::config_differences(stored, now)) {
    if (d.key != "seed" && d.key != "data.val_fraction") continue;
    // This data, or the run's, draws no split from training samples (data=webdataset: val shards).
    if (d.after == "(absent)" || d.before == "(absent)") continue;
    listed += std::string(listed.empty() ? "" : ", ") + d.key + " " + d.after + " (the run's: " + d.before + ")";
  }
  if (listed.empty()) return;
  log::warning("validate: " + listed +
               " in this command: where the validation split is drawn from the training samples "
               "(data.val_fraction of them, picked by seed), these values draw another one, which holds samples "
               "this model trained on, and its metrics read too well; leave seed and data.val_fraction to the "
               "checkpoint to validate on the run's own held-out samples");
}

// predict on the very class tree an image model trained on (a root without the train/ test/
// layout, whose validation images were drawn from it too): every image was trained or validated
// on, so predict/acc reads far too well. Said, as testing on a training table or array is.
void warn_about_predicting_training_images(const Node& stored, const Node& composed, const config::ResolveContext& ctx,
                                           const std::optional<fs::path>& training_cwd) {
  const Node* name = config::select(stored, "data.name");
  const Node* trained = config::select(stored, "data.root");
  if (name == nullptr || !name->is_string() || name->as_string() != "image_folder" || trained == nullptr ||
      !trained->is_string() || trained->as_string().empty()) {
    return;
  }
  std::string root;
  try {
    root = expand_home(resolved_string(composed, "data.root", ctx));
  } catch (const std::exception&) {
    return;  // the engine's own checks follow
  }
  fs::path then = expand_home(trained->as_string());
  if (then.is_relative() && training_cwd) then = *training_cwd / then;
  std::error_code ec;
  if (root.empty() || !fs::is_directory(root, ec) || fs::is_directory(fs::path(root) / "train", ec) ||
      !same_file(root, then.string())) {
    return;
  }
  log::warning("predict: data.root " + root +
               " is the folder the checkpoint was trained on, a class tree whose validation images were drawn "
               "from it too: every image was trained or validated on, so predict/acc says how well the model fits "
               "them, not how it does on images it has not seen; give data.root a folder of held-out images");
}

// ckpt_path=last where no last.ckpt exists starts afresh (as Lightning does), which is right before
// a run's first save; but a directory that holds other checkpoints (a run with save_last=false, or
// one whose last.ckpt was removed or never written) would have them overwritten or deleted as the
// new run's top k. Refused, naming them and the newest to resume from.
void refuse_starting_over(const fs::path& directory) {
  const std::vector<std::string> found = formats::checkpoints_newest_first(directory.string());
  if (found.empty()) return;
  // Named oldest first.
  std::string names;
  for (size_t i = 0; i < found.size() && i < 3; ++i) {
    names += std::string(i == 0 ? "" : ", ") + fs::path(found[found.size() - 1 - i]).filename().string();
  }
  if (found.size() > 3) names += " and " + std::to_string(found.size() - 3) + " more";
  const std::string& newest = found.front();
  throw Error(
      "ckpt_path=last",
      directory.string() + " holds no last.ckpt to resume from, but holds " + names +
          " of an earlier fit here (one with callbacks.model_checkpoint.save_last=false, or whose last.ckpt was "
          "removed, or never written: a disk that filled while it was written leaves the epoch's other "
          "checkpoint): starting from scratch would overwrite or delete them; nothing was written",
      "Resume from one of them (ckpt_path=" + newest + ", the newest), or start afresh in a new hydra.run.dir.");
}

}  // namespace

void verify_resume_checkpoint(const Node& composed, const std::string& run_dir, const config::ResolveContext& ctx) {
  const Node* ckpt = composed.find("ckpt_path");
  if (ckpt == nullptr || ckpt->is_null()) return;
  const std::string wanted = resolved_string(composed, "ckpt_path", ctx);
  const std::string directory = checkpoint_directory(composed, run_dir, ctx);
  // ckpt_path=last before any checkpoint starts afresh (the engine says so).
  if (wanted == "last" && !present(fs::path(directory) / "last.ckpt")) {
    refuse_starting_over(directory);
    return;
  }
  const std::string path = formats::resolve_checkpoint_name(wanted, directory);
  // Where this command would write its checkpoints (its own dirpath override included).
  refuse_resuming_into_another_run(path, job_checkpoint_directory(composed, run_dir, ctx), run_dir);
  const formats::CheckpointFile file = formats::read_checkpoint_file(path);
  if (file.config_yaml.empty()) return;  // format 1: nothing to compare
  const Node stored = config::load_yaml_string(file.config_yaml, path + " (its config)").root;
  auto names = [&](const std::string& group) -> std::pair<std::string, std::string> {
    const Node* then = config::select(stored, group + ".name");
    if (then == nullptr || config::select(composed, group + ".name") == nullptr) return {};
    return {then->is_string() ? then->as_string() : config::python_str(*then),
            resolved_string(composed, group + ".name", ctx)};
  };
  if (const auto [then, now] = names("optimizer"); then != now) {
    throw Error("optimizer=" + now,
                "the checkpoint " + path + " was trained with optimizer=" + then + "; this run has optimizer=" + now +
                    ": its optimizer state (" + then + "'s moments and step counts) cannot be loaded into " + now +
                    "; nothing was written",
                "Resume with optimizer=" + then +
                    " (its settings, e.g. optimizer.lr, may change), or train with optimizer=" + now +
                    " as a new run: another hydra.run.dir and no ckpt_path (trainer export ckpt_path=" + path +
                    " writes the weights as .safetensors).");
  }
  warn_about_other_data(stored, composed, ctx, wanted);
  if (const auto [then, now] = names("scheduler"); then != now) {
    log::warning("ckpt_path=" + wanted + ": the checkpoint was trained with scheduler=" + then +
                 ", this run has scheduler=" + now + ": the learning rate follows " + now + " from step " +
                 std::to_string(file.summary.global_step) + " on");
  }
}

EvaluationPlan plan_evaluation(const std::string& command, Node composed,
                               const std::vector<config::Override>& overrides, const config::ResolveContext& ctx,
                               bool keep_run_dir, std::optional<long long> now) {
  EvaluationPlan plan;
  Node* hydra = composed.find("hydra");
  if (hydra == nullptr) throw Error("", "internal: the composed config has no hydra node");
  config::ResolveContext context = ctx;
  context.hydra = hydra;
  bool run_dir_given = false;
  for (const config::Override& o : overrides) run_dir_given = run_dir_given || o.key == "hydra.run.dir";
  const fs::path run_dir = fs::absolute(resolved_string(composed, "hydra.run.dir", context)).lexically_normal();
  const std::string wanted =
      composed.find("ckpt_path") != nullptr ? resolved_string(composed, "ckpt_path", context) : "";
  const LocatedCheckpoint located = locate_checkpoint(composed, overrides, context);
  plan.training_run = located.training_run;

  if (!located.checkpoint.empty()) {
    plan.checkpoint = located.checkpoint.string();
    const formats::CheckpointFile file = formats::read_checkpoint_summary(plan.checkpoint);
    std::string loaded = "checkpoint " + plan.checkpoint;
    if (!file.legacy) {
      loaded += " (" +
                formats::checkpoint_position(file.summary.epoch, file.summary.batch_in_epoch, file.summary.global_step);
      if (!file.summary.best.empty() && file.summary.best.front().second == plan.checkpoint) loaded += ", the best";
      loaded += ")";
    }
    if (wanted == "best" || wanted == "last") loaded += " for ckpt_path=" + wanted;
    if (plan.training_run) loaded += " of the training run " + *plan.training_run;
    plan.notes.push_back(loaded);
    if (file.config_yaml.empty()) {
      plan.notes.push_back(
          "the checkpoint stores no config (written by an older trainer): model, data and precision "
          "come from this command's config");
    } else {
      const Node stored = config::load_yaml_string(file.config_yaml, plan.checkpoint + " (its config)").root;
      take_settings(composed, stored, overrides, working_directory_of(plan.training_run), plan.notes);
      if (command == "validate") warn_about_redrawn_split(stored, composed, context);
      if (command == "predict") {
        warn_about_predicting_training_images(stored, composed, context, working_directory_of(plan.training_run));
      }
    }
    composed.set("ckpt_path", Node::string(plan.checkpoint));
  }

  // The evaluation's own directory: beside nothing it could overwrite.
  fs::path own = run_dir;
  if (keep_run_dir) {
    // rank 0's choice on this rank's command line, or a sweep job's directory
  } else if (plan.training_run && (!run_dir_given || run_dir == fs::path(*plan.training_run))) {
    own = fresh_dir(fs::path(*plan.training_run) / "eval", command, now);
  } else if (holds_a_run(run_dir) && run_dir_given) {
    own = fresh_dir(run_dir / "eval", command, now);
  } else if (holds_a_run(run_dir)) {  // Hydra's default directory, taken by another run this second
    for (int i = 1; holds_a_run(own); ++i) own = run_dir.string() + "_" + std::to_string(i);
  }
  if (plan.training_run && run_dir_given && !keep_run_dir && own == run_dir &&
      lies_within(run_dir, fs::path(*plan.training_run)) &&
      !lies_within(run_dir, fs::path(*plan.training_run) / "eval")) {
    // hydra.run.dir=<run>/checkpoints, <run>/tensorboard, <run>/sub: the evaluation's .hydra,
    // metrics.csv and log would land among the training run's files.
    throw Error("hydra.run.dir=" + run_dir.string(),
                "lies inside the training run " + *plan.training_run + " this " + command +
                    " reads its checkpoint from: its .hydra, metrics.csv and log would be written among that run's "
                    "files; nothing was written",
                "Give hydra.run.dir=" + *plan.training_run + " (an evaluation then writes into " + *plan.training_run +
                    "/eval/" + command + "_<date>_<time>), or a directory outside the training run.");
  }
  // A run the user cannot write (read-only, immutable, another user's): its eval/ cannot be made,
  // and "set hydra.run.dir to a writable place" would point back at the run for ckpt_path=best.
  if (plan.training_run && lies_within(own, fs::path(*plan.training_run) / "eval")) {
    const fs::path eval = fs::path(*plan.training_run) / "eval";
    const fs::path where = present(eval) ? eval : fs::path(*plan.training_run);
    if (::access(where.c_str(), W_OK) != 0) {
      const std::string why = std::strerror(errno);
      throw Error("hydra.run.dir=" + *plan.training_run,
                  "an evaluation writes into the training run's eval/, and " + where.string() + " cannot be written (" +
                      why + "); nothing was written",
                  "Give the checkpoint's path and a directory of your own: ckpt_path=" + plan.checkpoint +
                      " hydra.run.dir=<a writable directory>.");
    }
  }
  // Inside another training run's checkpoints/, .hydra/ or tensorboard/ (the evaluated run's own
  // eval/ is where evaluations go).
  if (!keep_run_dir) refuse_directory_inside_run(own.string(), "hydra.run.dir");
  if (plan.training_run) refuse_writing_into_run(composed, own, fs::path(*plan.training_run), context);
  plan.run_dir = own.string();
  set_path(*composed.find("hydra"), "run.dir", Node::string(plan.run_dir));
  plan.config = std::move(composed);
  return plan;
}

}  // namespace trainer::launch
