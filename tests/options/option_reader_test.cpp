#include "trainer/options/option_reader.h"

#include <algorithm>
#include <stdexcept>

#include <catch2/catch.hpp>

#include "trainer/config/yaml.h"
#include "trainer/util/error.h"

using namespace trainer;
using Catch::Contains;

namespace {

std::string error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("the reader gives the declared default for an absent key and checks a present one") {
  config::YamlDocument document = config::load_yaml_string("trainer:\n  max_epochs: -5\n  max_steps: 7\n", "job.yaml");
  const config::ConfigView root(document.root);
  const options::OptionReader trainer(root.sub("trainer"));
  CHECK(trainer.get<int64_t>("max_steps") == 7);
  CHECK(trainer.get<int64_t>("log_every_n_steps") == 50);  // declared default
  CHECK(trainer.get<std::optional<double>>("gradient_clip_val") == std::nullopt);
  CHECK(trainer.choice("gradient_clip_algorithm") == "norm");
  CHECK(trainer.seconds("dist_timeout") == 1800.0);
  const std::string message = error_of([&] { trainer.get<int64_t>("max_epochs"); });
  CHECK_THAT(message, Contains("trainer.max_epochs (job.yaml:2)"));
  CHECK_THAT(message, Contains("-5 is out of range"));
  CHECK_THAT(message, Contains("Set trainer.max_epochs to an int at least 0 or -1."));
}

TEST_CASE("an undeclared key cannot be read, and a computed default needs the code's value") {
  config::YamlDocument document = config::load_yaml_string("scheduler:\n  name: cosine\n", "job.yaml");
  const config::ConfigView root(document.root);
  const options::OptionReader scheduler(root.sub("scheduler"), "cosine");
  CHECK_THROWS_AS(scheduler.get<int64_t>("step_size"), std::logic_error);  // step's key, not cosine's
  CHECK_THROWS_AS(scheduler.get<double>("t_max"), std::logic_error);       // computed: get_or
  CHECK(scheduler.get_or<double>("t_max", 12.0) == 12.0);
  CHECK(scheduler.get<double>("eta_min") == 0.0);
  CHECK_FALSE(scheduler.declares("step_size"));
}

TEST_CASE("each read is recorded under its section and variant") {
  config::YamlDocument document = config::load_yaml_string("model:\n  name: cnn\n  hidden_size: 8\n", "job.yaml");
  const config::ConfigView root(document.root);
  options::OptionReader(root.sub("model"), "cnn").get<int64_t>("hidden_size");
  const std::vector<std::string> keys = options::keys_read();
  CHECK(std::find(keys.begin(), keys.end(), "model[cnn].hidden_size") != keys.end());
}

TEST_CASE("a mandatory key without a value is an error naming it") {
  config::YamlDocument document = config::load_yaml_string("model:\n  name: torchscript\n", "job.yaml");
  const config::ConfigView root(document.root);
  const options::OptionReader model(root.sub("model"), "torchscript");
  CHECK_THAT(error_of([&] { model.get<std::string>("path"); }), Contains("model.path"));
}
