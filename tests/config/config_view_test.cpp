// ConfigView: typed access for the engine, resolution on access, and the messages users see.
// Also did_you_mean, which every "unknown name" error uses.
#include "trainer/config/config_view.h"

#include <catch2/catch.hpp>

#include "trainer/config/did_you_mean.h"
#include "trainer/config/yaml.h"
#include "trainer/util/error.h"

using Catch::Matchers::Contains;
using trainer::Error;
using trainer::config::ConfigView;
using trainer::config::did_you_mean;
using trainer::config::edit_distance;
using trainer::config::load_yaml_string;
using trainer::config::Node;

namespace {

const char* const kConfig =
    "trainer:\n"                                  // 1
    "  name: run\n"                               // 2
    "  seed: 42\n"                                // 3
    "  max_epochs: ten\n"                         // 4
    "  lr: 1\n"                                   // 5
    "  amp: true\n"                               // 6
    "  devices: [0, 1]\n"                         // 7
    "  big: 3000000000\n"                         // 8
    "  negative: -1\n"                            // 9
    "  nothing: null\n"                           // 10
    "  scale: 0.5\n"                              // 11
    "model:\n"                                    // 12
    "  x: '\?\?\?'\n"                             // 13
    "  hidden: ${trainer.seed}\n"                 // 14
    "  tag: h${model.hidden}\n"                   // 15
    "  dims: ['${trainer.seed}', 7]\n"            // 16
    "optimizers:\n"                               // 17
    "  adam: {lr: 0.001, betas: [0.9, 0.999]}\n"  // 18
    "optimizer: ${optimizers.adam}\n"             // 19
    "broken: ${nope}\n"                           // 20
    "weights: {a: 1.5, b: 2}\n";                  // 21

Node config() { return load_yaml_string(kConfig, "configs/trainer/default.yaml").root; }

template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& error) {
    return error.what();
  }
  FAIL("expected an error");
  return {};
}

}  // namespace

TEST_CASE("get reads typed values") {
  const Node root = config();
  ConfigView view(root);
  CHECK(view.get<std::string>("trainer.name") == "run");
  CHECK(view.get<int64_t>("trainer.seed") == 42);
  CHECK(view.get<int>("trainer.seed") == 42);
  CHECK(view.get<size_t>("trainer.seed") == 42u);
  CHECK(view.get<double>("trainer.scale") == 0.5);
  CHECK(view.get<double>("trainer.lr") == 1.0);  // an int is accepted for a float
  CHECK(view.get<float>("trainer.lr") == 1.0f);
  CHECK(view.get<bool>("trainer.amp"));
  CHECK(view.get<std::vector<int64_t>>("trainer.devices") == std::vector<int64_t>{0, 1});
  CHECK(view.get<std::vector<double>>("optimizers.adam.betas") == std::vector<double>{0.9, 0.999});
  CHECK(view.get<std::optional<int>>("trainer.nothing") == std::nullopt);
  CHECK(view.get<std::optional<int>>("trainer.seed") == 42);
  CHECK(view.get<std::map<std::string, double>>("weights") == std::map<std::string, double>{{"a", 1.5}, {"b", 2.0}});
  CHECK(view.get<int>("trainer.devices[1]") == 1);
  CHECK(view.get<int>("trainer.devices.1") == 1);
  CHECK(view.node("trainer.name").origin().describe() == "configs/trainer/default.yaml:2");
}

TEST_CASE("a wrong type names the key, the origin and both types") {
  const Node root = config();
  ConfigView view(root);
  const std::string message = error_of([&] { view.get<int64_t>("trainer.max_epochs"); });
  CHECK_THAT(message, Contains("trainer.max_epochs is a str ('ten')"));
  CHECK_THAT(message, Contains("configs/trainer/default.yaml:4"));
  CHECK_THAT(message, Contains("expected an int"));
  CHECK_THAT(error_of([&] { view.get<bool>("trainer.seed"); }),
             Contains("trainer.seed is an int (42), expected a bool"));
  CHECK_THAT(error_of([&] { view.get<std::string>("trainer.scale"); }), Contains("is a float (0.5), expected a str"));
  CHECK_THAT(error_of([&] { view.get<int>("trainer.scale"); }), Contains("expected an int"));
  CHECK_THAT(error_of([&] { view.get<std::vector<int>>("trainer.name"); }), Contains("expected a list"));
  // Items are named by their full path.
  CHECK_THAT(error_of([&] { view.get<std::vector<std::string>>("trainer.devices"); }),
             Contains("trainer.devices.0 is an int (0), expected a str"));
  CHECK_THAT(error_of([&] { view.get<int>("trainer.nothing"); }), Contains("trainer.nothing is null, expected an int"));
}

TEST_CASE("ints beyond 64 bits are refused by typed access, naming the path") {
  const Node root = load_yaml_string(
                        "a: 123456789012345678901234567890\nb: -9223372036854775809\nc: ${a}\n"
                        "huge: 1" +
                            std::string(400, '0') + "\n",
                        "big.yaml")
                        .root;
  ConfigView view(root);
  CHECK_THAT(error_of([&] { view.get<int64_t>("a"); }),
             Contains("big.yaml:1") && Contains("a is 123456789012345678901234567890, which does not fit in 64 bits"));
  CHECK_THAT(error_of([&] { view.get<int>("b"); }),
             Contains("b is -9223372036854775809, which does not fit in 64 bits"));
  CHECK_THAT(error_of([&] { view.get<int64_t>("c"); }), Contains("does not fit in 64 bits"));
  // float() of the int, as Python gives it.
  CHECK(view.get<double>("a") == 1.2345678901234568e+29);
  CHECK(view.get<double>("c") == 1.2345678901234568e+29);
  CHECK_THAT(error_of([&] { view.get<double>("huge"); }), Contains("too large for a float"));
  CHECK(view.node("a").int_text() == "123456789012345678901234567890");
}

TEST_CASE("integers are range-checked for narrower types") {
  const Node root = config();
  ConfigView view(root);
  CHECK(view.get<int64_t>("trainer.big") == 3000000000);
  CHECK_THAT(error_of([&] { view.get<int>("trainer.big"); }), Contains("does not fit"));
  CHECK_THAT(error_of([&] { view.get<uint32_t>("trainer.negative"); }),
             Contains("trainer.negative is -1, which does not fit in a non-negative int"));
}

TEST_CASE("a missing key suggests the closest key and how to add it") {
  const Node root = config();
  ConfigView view(root);
  const std::string message = error_of([&] { view.get<int>("trainer.max_epoch"); });
  CHECK_THAT(message, Contains("key 'trainer.max_epoch' not found"));
  CHECK_THAT(message, Contains("Did you mean 'trainer.max_epochs'?"));
  CHECK_THAT(message, Contains("add it with +trainer.max_epoch=..."));
  CHECK_THAT(error_of([&] { view.get<int>("trainr.seed"); }), Contains("Did you mean 'trainer'?"));
  CHECK_THAT(error_of([&] { view.get<int>("trainer.seed.x"); }), Contains("trainer.seed is an int (42), not a dict"));
  CHECK_THAT(error_of([&] { view.get<int>("trainer.devices.5"); }), Contains("trainer.devices is a list of 2 items"));
}

TEST_CASE("??? is a missing mandatory value") {
  const Node root = config();
  ConfigView view(root);
  const std::string message = error_of([&] { view.get<int>("model.x"); });
  CHECK_THAT(message, Contains("missing mandatory value"));
  CHECK_THAT(message, Contains("e.g. model.x=..."));
  CHECK_THAT(message, Contains("configs/trainer/default.yaml:13"));
  CHECK(view.has("model.x"));
  CHECK_THAT(error_of([&] { view.get_or<int>("model.x", 3); }), Contains("missing mandatory value"));
}

TEST_CASE("interpolations are resolved on access, without touching the tree") {
  const Node root = config();
  const Node before = root;
  ConfigView view(root);
  CHECK(view.get<int>("model.hidden") == 42);
  CHECK(view.get<std::string>("model.tag") == "h42");
  CHECK(view.get<std::vector<int>>("model.dims") == std::vector<int>{42, 7});
  CHECK(view.get<double>("optimizer.lr") == 0.001);
  ConfigView optimizer = view.sub("optimizer");
  CHECK(optimizer.get<std::vector<double>>("betas") == std::vector<double>{0.9, 0.999});
  // A broken interpolation elsewhere does not matter until it is read.
  CHECK(view.get<int>("trainer.seed") == 42);
  CHECK_THAT(error_of([&] { view.get<int>("broken"); }), Contains("interpolation target 'nope' not found"));
  CHECK(root == before);
}

TEST_CASE("sub views remember their prefix") {
  const Node root = config();
  ConfigView view(root);
  ConfigView trainer = view.sub("trainer");
  CHECK(trainer.prefix() == "trainer");
  CHECK(trainer.get<int>("seed") == 42);
  CHECK(trainer.keys().size() == 10);
  CHECK(trainer.keys()[0] == "name");
  CHECK_THAT(error_of([&] { trainer.get<int64_t>("max_epochs"); }), Contains("trainer.max_epochs is a str ('ten')"));
  CHECK_THAT(error_of([&] { trainer.get<int64_t>("max_epoch"); }), Contains("add it with +trainer.max_epoch=..."));
  ConfigView adam = view.sub("optimizers").sub("adam");
  CHECK(adam.prefix() == "optimizers.adam");
  CHECK(adam.get<double>("betas.0") == 0.9);
  CHECK_THAT(error_of([&] { view.sub("trainer.seed"); }), Contains("expected a dict"));
  ConfigView model = view.sub("model");
  CHECK(model.get<int>("hidden") == 42);  // resolved with its full path
}

TEST_CASE("get_or and has") {
  const Node root = config();
  ConfigView view(root);
  CHECK(view.get_or<int>("trainer.seed", 1) == 42);
  CHECK(view.get_or<int>("trainer.absent", 1) == 1);
  CHECK(view.get_or<int>("trainer.nothing", 1) == 1);
  CHECK(view.get_or<std::string>("absent.deeper", "x") == "x");
  CHECK_THAT(error_of([&] { view.get_or<int>("trainer.name", 1); }), Contains("expected an int"));
  CHECK(view.has("trainer.seed"));
  CHECK(view.has("trainer.nothing"));
  CHECK_FALSE(view.has("trainer.absent"));
  CHECK(view.has("model.hidden"));
  CHECK(view.has("optimizer.lr"));
  CHECK_FALSE(view.has("optimizer.nope"));
}

TEST_CASE("did_you_mean suggests close names only") {
  const std::vector<std::string> keys{"max_epochs", "lr", "optimizer", "batch_size", "seed"};
  CHECK(did_you_mean("max_epoch", keys) == "Did you mean 'max_epochs'?");
  CHECK(did_you_mean("optimiser", keys) == "Did you mean 'optimizer'?");
  CHECK(did_you_mean("lrr", keys) == "Did you mean 'lr'?");
  CHECK(did_you_mean("LR", keys) == "Did you mean 'lr'?");
  CHECK(did_you_mean("sede", keys) == "Did you mean 'seed'?");  // transposition
  CHECK(did_you_mean("batchsize", keys) == "Did you mean 'batch_size'?");
  CHECK(did_you_mean("model", keys).empty());
  CHECK(did_you_mean("x", {"y"}).empty());
  CHECK(did_you_mean("", keys).empty());
  CHECK(did_you_mean("seed", keys).empty());  // an exact match is no typo
  CHECK(did_you_mean("anything", {}).empty());
  CHECK(edit_distance("kitten", "sitting") == 3);
  CHECK(edit_distance("ab", "ba") == 1);
}

TEST_CASE("a missing key next to a broken interpolation is still reported as missing") {
  const Node root = load_yaml_string("a:\n  b: ${nope}\n  c: 1\nd: ${a}\n", "x.yaml").root;
  ConfigView view(root);
  CHECK_THAT(error_of([&] { view.get<int>("a.cc"); }), Contains("Did you mean 'a.c'?"));
  CHECK(view.get<int>("a.c") == 1);
  CHECK_THAT(error_of([&] { view.get<int>("d.c"); }), Contains("interpolation target 'nope'"));
}
