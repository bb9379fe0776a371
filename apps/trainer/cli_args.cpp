#include "cli_args.h"

#include <cctype>
#include <iostream>
#include <set>

#include <CLI/CLI.hpp>

#include "trainer/config/did_you_mean.h"

namespace trainer::app {
namespace {

const std::set<std::string> kInfoKinds = {"all", "defaults", "defaults-tree", "config", "searchpath", "plugins"};

// Hydra's flags (its argparse parser), long forms.
const std::vector<std::string> kLongFlags = {
    "--help",     "--hydra-help",       "--version",     "--cfg",         "--resolve",    "--package", "--run",
    "--multirun", "--shell-completion", "--config-path", "--config-name", "--config-dir", "--info"};

// A flag as argparse reads it: a short form with its value after `=` (-cn=NAME, -c=job, -p=KEY)
// or an unambiguous prefix of a long one (--config-n NAME, --pack KEY) is the long flag.
std::string long_flag(const std::string& arg) {
  static const std::vector<std::pair<std::string, std::string>> kShort = {
      {"-cp", "--config-path"}, {"-cn", "--config-name"}, {"-cd", "--config-dir"},
      {"-c", "--cfg"},          {"-p", "--package"},      {"-i", "--info"}};
  for (const auto& [short_form, long_form] : kShort) {
    if (arg.rfind(short_form + "=", 0) == 0) return long_form + arg.substr(short_form.size());
  }
  if (arg.rfind("--", 0) != 0 || arg.size() < 3) return arg;
  const size_t equals = arg.find('=');
  const std::string name = arg.substr(0, equals);
  std::string match;
  for (const std::string& flag : kLongFlags) {
    if (flag == name) return arg;
    if (flag.rfind(name, 0) == 0) {
      if (!match.empty()) return arg;  // ambiguous: CLI11 says it is unknown
      match = flag;
    }
  }
  return match.empty() ? arg : match + (equals == std::string::npos ? "" : arg.substr(equals));
}

// Hydra spells some short flags with two letters (-cp, -cn, -cd), which CLI11 cannot declare,
// and `--info` takes an optional value; normalise argv to long forms first. `--` ends the flags,
// as in argparse: what follows is overrides (the marker itself is dropped; CLI11 would give the
// words after it to the app's own list, and the command's list overwrote them). A bare `++` is
// an override to Hydra (with no key: an error), to CLI11 the end of a subcommand: it is held back
// in `bare_overrides` for the override parser.
std::vector<std::string> normalise(int argc, char** argv, std::vector<std::string>& bare_overrides) {
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--") continue;
    if (arg == "++") {
      bare_overrides.push_back(arg);
      continue;
    }
    if (arg == "-cp") arg = "--config-path";
    if (arg == "-cn") arg = "--config-name";
    if (arg == "-cd") arg = "--config-dir";
    if (arg == "-sc") arg = "--shell-completion";
    if (arg == "--config_path") arg = "--config-path";
    if (arg == "--config_name") arg = "--config-name";
    if (arg == "--config_dir") arg = "--config-dir";
    arg = long_flag(arg);
    if (arg == "-i" || arg == "--info") {
      if (i + 1 < argc && kInfoKinds.count(argv[i + 1])) {
        args.push_back("--info=" + std::string(argv[++i]));
      } else if (i + 1 < argc && argv[i + 1][0] != '-' && argv[i + 1][0] != '\0') {
        // argparse gives the next word to the flag's optional value, then checks it.
        throw CLI::ValidationError("argument --info/-i: invalid choice: '" + std::string(argv[i + 1]) +
                                   "' (choose from all, config, defaults, defaults-tree, plugins, searchpath): name "
                                   "what to print before the overrides (--info defaults " +
                                   std::string(argv[i + 1]) + "), or put --info last");
      } else {
        args.push_back("--info=all");
      }
      continue;
    }
    args.push_back(arg);
  }
  return args;
}

const std::vector<std::string> kCommands = {"fit", "validate", "test", "predict", "export", "tune", "data", "sweep"};

// A first word that is no command (a typo, or an override with the command left out) gets the
// command line it most likely meant, instead of CLI11's "arguments were not expected".
// `trainer tune X`, `trainer data X` and `trainer sweep X` with an X that is not one of their actions.
bool explain_missing_action(int argc, char** argv) {
  const std::string command = argv[1];
  const std::vector<std::string> actions = command == "tune"   ? std::vector<std::string>{"batch_size"}
                                           : command == "data" ? std::vector<std::string>{"pack"}
                                                               : std::vector<std::string>{"resume", "summary"};
  const std::string given = argc > 2 ? argv[2] : "";
  if (!given.empty() && given[0] == '-') return false;
  for (const std::string& action : actions) {
    if (given == action || (command == "sweep" && given == "run-job")) return false;
  }
  std::string rest;
  for (int i = 3; i < argc; ++i) rest += std::string(" ") + argv[i];
  std::string meant = config::closest_match(given, actions);
  if (meant.empty()) meant = actions.front();
  std::cerr << "Error: command line: "
            << (given.empty() ? "trainer " + command + " needs an action"
                              : "unknown action '" + given + "' of trainer " + command)
            << ". Did you mean `trainer " << command << " " << meant << rest << "`? " << command << " takes "
            << (command == "tune"   ? "batch_size [overrides...]"
                : command == "data" ? "pack [--split S] [-o PATTERN] [--maxcount N] [--maxsize BYTES] [overrides...]"
                                    : "resume DIR or summary DIR")
            << ".\n";
  return true;
}

bool explain_missing_command(int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-' || argv[1][0] == '\0') return false;
  const std::string first = argv[1];
  if (first == "tune" || first == "data" || first == "sweep") return explain_missing_action(argc, argv);
  for (const std::string& command : kCommands) {
    if (first == command) return false;
  }
  std::string rest;
  for (int i = 2; i < argc; ++i) rest += std::string(" ") + argv[i];
  const bool is_override = first.find('=') != std::string::npos || first[0] == '+' || first[0] == '~';
  std::string meant = config::closest_match(first, kCommands);
  if (meant.empty() || meant == "sweep") meant = "fit";
  if (meant == "tune") meant = "tune batch_size";
  if (meant == "data") meant = "data pack";
  const std::string suggestion = "trainer " + meant + (is_override ? " " + first : std::string()) + rest;
  std::cerr << "Error: command line: "
            << (is_override ? "no command before '" + first + "'" : "unknown command '" + first + "'")
            << ". Did you mean `" << suggestion << "`? The commands are fit, validate, test, predict, export, tune "
            << "batch_size, data pack and sweep resume|summary; trainer --help lists the config groups.\n";
  return true;
}

// `text` as a Hydra quoted string, so that commas, brackets and spaces in a path stay the path's.
std::string quoted_override_value(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'') out += '\\';  // Hydra's escape of a quote inside a quoted value
    out += c;
  }
  return out + "'";
}

// "3000000000", "500M", "3G", "64k": a positive number of bytes (K, M, G are powers of 1000, as
// webdataset's maxsize=3e9); nullopt for anything else.
std::optional<int64_t> byte_count(const std::string& text) {
  size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  if (digits == 0 || digits > 15) return std::nullopt;
  const int64_t number = std::stoll(text.substr(0, digits));
  std::string unit = text.substr(digits);
  if (!unit.empty() && (unit.back() == 'B' || unit.back() == 'b')) unit.pop_back();
  int64_t scale = 1;
  if (unit == "k" || unit == "K")
    scale = 1000;
  else if (unit == "m" || unit == "M")
    scale = int64_t{1000} * 1000;
  else if (unit == "g" || unit == "G")
    scale = int64_t{1000} * 1000 * 1000;
  else if (!unit.empty())
    return std::nullopt;
  if (number <= 0 || number > (int64_t{1} << 53) / scale) return std::nullopt;
  return number * scale;
}

}  // namespace

std::optional<CliArgs> parse_cli(int argc, char** argv, int& exit_code) {
  if (explain_missing_command(argc, argv)) {
    exit_code = 1;
    return std::nullopt;
  }
  CliArgs args;
  CLI::App app{"trainer: train LibTorch models from Hydra-style configs", "trainer"};
  app.set_help_flag();  // our --help also lists config groups, so it is handled by the caller
  app.add_flag("-h,--help", args.help, "Show this help with the config groups and the config");
  app.add_flag("--version", args.version, "Show the version and the LibTorch it uses");
  app.add_flag("--hydra-help", args.hydra_help, "Hydra's help: its flags and the hydra/* config groups");
  // Without a command, overrides go to --help, --hydra-help and --shell-completion (as in Hydra,
  // where `app -sc query=bash` is what the installed completion function runs).
  app.add_option("overrides", args.overrides,
                 "Without a command: overrides for --help and --hydra-help, or install|uninstall|query=SHELL for "
                 "--shell-completion");
  app.require_subcommand(0, 1);
  app.fallthrough();

  for (const char* name : {"fit", "validate", "test", "predict", "export"}) {
    const std::string n = name;
    CLI::App* sub = app.add_subcommand(
        name, n == "fit"        ? "Train a model (then test it if test_after_fit)"
              : n == "validate" ? "Run the validation loop on a checkpoint"
              : n == "test"     ? "Run the test loop on a checkpoint"
              : n == "predict"
                  ? "Write a checkpoint's predictions for data.root's images (or the test split) to predictions.csv"
                  : "Write a checkpoint's weights as .safetensors");
    sub->add_option("overrides", args.overrides,
                    "Config overrides: key=value, +key=value, ++key=value, ~key, group=option");
    sub->fallthrough();
  }
  CLI::App* tune = app.add_subcommand("tune", "Tune a hyper-parameter by trials, then write it into the run's config");
  tune->require_subcommand(1);
  tune->fallthrough();
  CLI::App* tune_batch = tune->add_subcommand(
      "batch_size", "Find the largest batch that fits (tuner.mode=power|binsearch, tuner.max_memory_mb on CPU)");
  tune_batch->add_option("overrides", args.overrides,
                         "Config overrides: key=value, +key=value, ++key=value, ~key, group=option");
  tune_batch->fallthrough();
  CLI::App* data = app.add_subcommand("data", "Convert data: write a split as tar shards for data=webdataset");
  data->require_subcommand(1);
  data->fallthrough();
  CLI::App* pack = data->add_subcommand(
      "pack", "Write a split of the data config (an image folder, a table, tensor files) as WebDataset tar shards");
  std::string pack_split, pack_output, pack_maxsize, pack_maxcount;
  bool pack_no_shuffle = false;
  pack->add_option("--split", pack_split, "The split to write: train (default), val or test (pack.split)")
      ->check(CLI::IsMember({"train", "val", "test"}));
  pack->add_option("-o,--output", pack_output,
                   "The shard names, one number in them: shards/train-%06d.tar (pack.output; default "
                   "<run dir>/shards/<split>-%06d.tar)")
      ->type_name("PATTERN");
  pack->add_option("--maxcount", pack_maxcount, "Most samples per shard (pack.maxcount; default 100000)")
      ->type_name("N");
  pack->add_option("--maxsize", pack_maxsize,
                   "Most bytes per shard, with an optional K, M or G (powers of 1000): 3G (pack.maxsize; default 3G)")
      ->type_name("BYTES");
  pack->add_flag("--no-shuffle", pack_no_shuffle,
                 "Write the samples in the data's order (pack.shuffle=false; by default an order drawn from seed)");
  pack->add_option("overrides", args.overrides,
                   "Config overrides: key=value, +key=value, ++key=value, ~key, group=option");
  pack->fallthrough();
  CLI::App* sweep = app.add_subcommand("sweep", "Work with a sweep directory (hydra.sweep.dir of a -m run)");
  sweep->require_subcommand(1);
  CLI::App* resume = sweep->add_subcommand("resume", "Run the jobs of a sweep that have not ended well");
  resume->add_option("sweep_dir", args.sweep_dir, "The sweep directory")->required();
  CLI::App* summary = sweep->add_subcommand("summary", "Print (and refresh) a sweep's summary table");
  summary->add_option("sweep_dir", args.sweep_dir, "The sweep directory")->required();
  CLI::App* run_job = sweep->add_subcommand("run-job", "Run one job of a planned sweep (what launchers start)");
  run_job->add_option("sweep_dir", args.sweep_dir, "The sweep directory")->required();
  run_job->add_option("job", args.sweep_job, "The job number")->required();

  app.add_option("-c,--cfg", args.cfg, "Print the config instead of running (job, hydra or all)")
      ->check(CLI::IsMember({"job", "hydra", "all"}))
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.add_flag("--resolve", args.resolve, "Resolve interpolations when printing with --cfg");
  app.add_option("-p,--package", args.package, "With --cfg: print only this config package")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.add_option("--info", args.info, "Print information: all, defaults, defaults-tree, config, searchpath")
      ->check(CLI::IsMember(kInfoKinds))
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.add_flag("-m,--multirun", args.multirun, "Run a sweep: one job per value combination");
  app.add_flag("-r,--run", args.run, "Run a job (the default; not with -m, --cfg or --info)");
  app.add_flag("--shell-completion", args.shell_completion,
               "Shell completion (-sc): install=bash|zsh|fish prints the script to eval "
               "(eval \"$(trainer fit -sc install=bash)\"), uninstall=SHELL the one that removes it");
  app.add_option("--config-path", args.config_path, "Primary config directory (-cp); default: the shipped configs/")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.add_option("--config-name", args.config_name, "Primary config name (-cn); default: config")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.add_option("--config-dir", args.config_dir, "Additional config directory (-cd)")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);

  std::vector<std::string> bare_overrides;
  try {
    std::vector<std::string> normalised = normalise(argc, argv, bare_overrides);
    std::reverse(normalised.begin(), normalised.end());  // CLI11 takes them reversed
    app.parse(normalised);
  } catch (const CLI::ParseError& error) {
    if (error.get_exit_code() == 0) {  // --help and the like
      exit_code = app.exit(error);
      return std::nullopt;
    }
    // `trainer data --help`: the help, not "a subcommand is required".
    if (!(args.help && dynamic_cast<const CLI::RequiredError*>(&error) != nullptr)) {
      // An argument CLI11 did not expect is most often a flag after the overrides.
      const bool extra = dynamic_cast<const CLI::ExtrasError*>(&error) != nullptr;
      const std::string command = argc > 1 && std::string(argv[1]) == "data" ? "trainer data pack"
                                  : argc > 1 && argv[1][0] != '-'            ? "trainer " + std::string(argv[1])
                                                                             : "trainer fit";
      std::cerr << "Error: command line: " << error.what() << "."
                << (extra ? " Flags go before the overrides (" + command + " [flags] [overrides...]);" : std::string())
                << " " << command << " --help lists them.\n";
      exit_code = 1;
      return std::nullopt;
    }
  }
  args.overrides.insert(args.overrides.end(), bare_overrides.begin(), bare_overrides.end());
  for (const char* name : {"fit", "validate", "test", "predict", "export"}) {
    if (app.got_subcommand(name)) args.command = name;
  }
  if (app.got_subcommand("tune") && tune_batch->parsed()) args.command = "tune_batch_size";
  if (app.got_subcommand("data") && pack->parsed()) {
    // The flags are the pack section's keys, given after the overrides. A flag given empty ("-o
    // $UNSET") or a key given both ways is refused rather than quietly becoming one of them.
    args.command = "data_pack";
    for (const auto& [flag, key] : std::vector<std::pair<std::string, std::string>>{{"--split", "split"},
                                                                                    {"--output", "output"},
                                                                                    {"--maxcount", "maxcount"},
                                                                                    {"--maxsize", "maxsize"},
                                                                                    {"--no-shuffle", "shuffle"}}) {
      if (pack->count(flag) == 0) continue;
      const std::string value = flag == "--split"      ? pack_split
                                : flag == "--output"   ? pack_output
                                : flag == "--maxcount" ? pack_maxcount
                                : flag == "--maxsize"  ? pack_maxsize
                                                       : "x";
      if (value.empty()) {
        std::cerr << "Error: command line: " << flag << " is given an empty value. Give one ("
                  << (flag == "--output" ? "-o shards/train-%06d.tar" : flag + " ...")
                  << "), or leave the flag out for its default.\n";
        exit_code = 1;
        return std::nullopt;
      }
      for (const std::string& override_text : args.overrides) {
        const size_t start = override_text.find_first_not_of('+');
        if (start != std::string::npos && override_text.compare(start, key.size() + 6, "pack." + key + "=") == 0) {
          std::cerr << "Error: command line: pack." << key << " is given twice, by " << flag << " and by '"
                    << override_text << "'. Give one of them.\n";
          exit_code = 1;
          return std::nullopt;
        }
      }
    }
    if (!pack_split.empty()) args.overrides.push_back("++pack.split=" + pack_split);
    if (!pack_output.empty()) args.overrides.push_back("++pack.output=" + quoted_override_value(pack_output));
    if (!pack_maxcount.empty()) {
      const bool whole = pack_maxcount.size() <= 12 &&
                         std::all_of(pack_maxcount.begin(), pack_maxcount.end(),
                                     [](unsigned char c) { return std::isdigit(c) != 0; }) &&
                         std::stoll(pack_maxcount) >= 1;
      if (!whole) {
        std::cerr << "Error: command line: --maxcount " << pack_maxcount
                  << " is not a number of samples. Give a whole number from 1 to 999999999999: --maxcount 10000.\n";
        exit_code = 1;
        return std::nullopt;
      }
      args.overrides.push_back("++pack.maxcount=" + pack_maxcount);
    }
    if (!pack_maxsize.empty()) {
      const std::optional<int64_t> bytes = byte_count(pack_maxsize);
      if (!bytes) {
        std::cerr << "Error: command line: --maxsize " << pack_maxsize
                  << " is not a size. Give bytes as a whole number, with an optional K, M or G (powers of 1000): "
                     "--maxsize 500M.\n";
        exit_code = 1;
        return std::nullopt;
      }
      args.overrides.push_back("++pack.maxsize=" + std::to_string(*bytes));
    }
    if (pack_no_shuffle) args.overrides.push_back("++pack.shuffle=false");
  }
  if (app.got_subcommand("sweep")) {
    args.command = "sweep";
    for (const char* action : {"resume", "summary", "run-job"}) {
      if (sweep->got_subcommand(action)) args.sweep_action = action;
    }
  }
  // The main app's flags also after `trainer fit --help` (App::help would show fit's own options).
  args.usage = app.get_formatter()->make_help(&app, "", CLI::AppFormatMode::Normal);
  if (args.command == "data_pack" || app.got_subcommand("data")) args.usage += "\n" + pack->help("trainer data");
  const std::string program = argc > 0 ? argv[0] : "trainer";
  args.program = program.substr(program.rfind('/') == std::string::npos ? 0 : program.rfind('/') + 1);
  return args;
}

}  // namespace trainer::app
