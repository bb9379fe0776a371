#include "trainer/config/registry.h"

#include <functional>
#include <string>

#include <catch2/catch.hpp>

#include "trainer/util/error.h"

using Factory = std::function<int()>;
using Registry = trainer::config::Registry<Factory>;

namespace {

Registry& widgets() {
  static Registry registry("widget", "TRAINER_REGISTER_WIDGET");
  return registry;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const trainer::Error& error) {
    return error.what();
  }
  return "no error";
}

}  // namespace

TRAINER_REGISTRY_ADD(widgets(), "gear", [] { return 1; });
TRAINER_REGISTRY_ADD(widgets(), "spring", [] { return 2; });

TEST_CASE("Registry: registered factories by name, sorted names, static registration") {
  CHECK(widgets().contains("gear"));
  CHECK_FALSE(widgets().contains("lever"));
  CHECK(widgets().names() == std::vector<std::string>{"gear", "spring"});
  CHECK(widgets().get("spring", "widget.name")() == 2);
}

TEST_CASE("Registry: an unknown name lists the known ones, suggests the closest, names the macro") {
  const std::string near = error_of([] { widgets().get("geer", "configs/widget.yaml:1"); });
  CHECK_THAT(near, Catch::StartsWith("configs/widget.yaml:1: unknown widget 'geer'"));
  CHECK_THAT(near, Catch::Contains("Did you mean 'gear'?"));
  CHECK_THAT(near, Catch::Contains("Known widgets: gear, spring."));
  CHECK_THAT(near, Catch::Contains("TRAINER_REGISTER_WIDGET"));
  CHECK_THAT(error_of([] { widgets().get("transformer", "w"); }), !Catch::Contains("Did you mean"));
}

TEST_CASE(
    "Registry: names are taken once unless the registry replaces; empty names and factories are "
    "refused") {
  Registry own("widget", "TRAINER_REGISTER_WIDGET");
  own.add("gear", [] { return 1; });
  CHECK_THAT(error_of([&] { own.add("gear", [] { return 3; }); }), Catch::Contains("'gear' is already registered"));
  CHECK_THAT(error_of([&] { own.add("", [] { return 3; }); }), Catch::Contains("must not be empty"));
  CHECK_THAT(error_of([&] { own.add("lever", nullptr); }), Catch::Contains("factory for widget 'lever' is empty"));

  Registry replacing("widget", "TRAINER_REGISTER_WIDGET", Registry::Taken::kReplace);
  replacing.add("gear", [] { return 1; });
  replacing.add("gear", [] { return 3; });
  CHECK(replacing.get("gear", "w")() == 3);
}
