#include "trainer/options/value_check.h"

#include <catch2/catch.hpp>

#include "trainer/config/yaml.h"

using namespace trainer;
using Catch::Contains;

namespace {

config::Node yaml(const std::string& text) { return *config::load_yaml_string("v: " + text, "test").root.find("v"); }

}  // namespace

TEST_CASE("numbers: type, range and Lightning's -1") {
  const options::Option epochs = options::integer("max_epochs", "10").at_least(0).or_minus_one().means("epochs");
  CHECK(options::check_value(epochs, yaml("3")) == "");
  CHECK(options::check_value(epochs, yaml("-1")) == "");
  CHECK_THAT(options::check_value(epochs, yaml("-5")), Contains("-5 is out of range: epochs, at least 0 or -1"));
  CHECK_THAT(options::check_value(epochs, yaml("abc")), Contains("expected an int (epochs), got str abc"));
  CHECK_THAT(options::check_value(epochs, yaml("1.5")), Contains("expected an int"));
  CHECK_THAT(options::check_value(epochs, yaml("null")), Contains("null is not allowed"));
  const options::Option share = options::number("val_fraction", "0.1").at_least(0).below(1).means("share");
  CHECK(options::check_value(share, yaml("0")) == "");  // an int is a number
  CHECK_THAT(options::check_value(share, yaml("1.0")), Contains("out of range: share, in [0, 1)"));
  const options::Option lr = options::number("lr", "0.001").at_least(0).means("the learning rate");
  CHECK_THAT(options::check_value(lr, yaml(".inf")), Contains("inf is not a finite number (the learning rate)"));
  CHECK_THAT(options::check_value(lr, yaml(".nan")), Contains("nan is not a finite number"));
  // Beyond 64 bits: refused with the exact digits, before anything runs (not as the run reads it).
  const options::Option seed = options::integer("seed", "42").means("seeds");
  CHECK_THAT(options::check_value(seed, yaml("99999999999999999999999")),
             Contains("99999999999999999999999 does not fit in 64 bits (seeds); use a value between "
                      "-9223372036854775808 and 9223372036854775807"));
  CHECK_THAT(options::check_value(epochs, yaml("-99999999999999999999999")), Contains("does not fit in 64 bits"));
}

TEST_CASE("choices name the closest one; ints read as their text") {
  const options::Option monitor = options::choice("monitor", "val/acc", {"val/acc", "val/loss"}).means("metric");
  CHECK_THAT(options::check_value(monitor, yaml("val/acx")),
             Contains("val/acx is not one of val/acc or val/loss (metric); did you mean 'val/acc'?"));
  const options::Option precision = options::choice("precision", "32", {"32", "16-mixed"}).means("p");
  CHECK(options::check_value(precision, yaml("32")) == "");
  CHECK_THAT(options::check_value(precision, yaml("8")), Contains("is not one of"));
}

TEST_CASE("durations, limits, lists and words") {
  const options::Option timeout = options::duration("dist_timeout", "\"00:00:30:00\"").above(0).means("t");
  CHECK(options::check_value(timeout, yaml("\"00:00:30:00\"")) == "");
  CHECK(options::check_value(timeout, yaml("90")) == "");
  CHECK_THAT(options::check_value(timeout, yaml("soon")), Contains("expected DD:HH:MM:SS"));
  CHECK_THAT(options::check_value(timeout, yaml("0")), Contains("out of range"));
  CHECK(options::parse_duration("01:00:00:30") == 86430.0);
  CHECK_FALSE(options::parse_duration("1:"));
  // Lightning's Timer takes the four fields or nothing: "0:02" is not 2 seconds (nor 2 hours).
  CHECK_FALSE(options::parse_duration("0:02"));
  CHECK_FALSE(options::parse_duration("01:30:00"));
  CHECK(options::parse_duration("00:00:00:02") == 2.0);
  CHECK(options::parse_duration("90") == 90.0);
  CHECK_THAT(options::check_value(timeout, yaml("\"1:30\"")), Contains("expected DD:HH:MM:SS"));
  const options::Option limit = options::limit("limit_val_batches", "1.0").means("l");
  CHECK(options::check_value(limit, yaml("0")) == "");
  CHECK(options::check_value(limit, yaml("0.5")) == "");
  CHECK_THAT(options::check_value(limit, yaml("1.5")), Contains("lies in [0, 1]"));
  CHECK_THAT(options::check_value(limit, yaml("-2")), Contains("cannot be negative"));
  const options::Option sizes = options::integers("hidden_sizes", "[256]").at_least(1).means("widths");
  CHECK(options::check_value(sizes, yaml("[1, 2]")) == "");
  CHECK_THAT(options::check_value(sizes, yaml("[]")), Contains("an empty list"));
  CHECK_THAT(options::check_value(sizes, yaml("[4, 0]")), Contains("item 1: 0 is out of range"));
  const options::Option workers = options::integer("num_workers", "auto").at_least(0).or_words({"auto"}).means("w");
  CHECK(options::check_value(workers, yaml("auto")) == "");
  CHECK_THAT(options::check_value(workers, yaml("many")), Contains("expected an int or auto"));
  CHECK(options::accepted(workers) == "an int at least 0 or auto");
}

TEST_CASE("lists of steps: names or maps of one name, the rest left to the reader") {
  const options::Option train = options::steps("train", "null").or_null().means("training steps");
  CHECK(options::check_value(train, yaml("null")) == "");
  CHECK(options::check_value(train, yaml("[horizontal_flip, {resize: 72}, {random_crop: {size: 28, padding: 4}}]")) ==
        "");
  CHECK(options::check_value(train, yaml("[]")) == "");
  CHECK_THAT(options::check_value(train, yaml("resize")), Contains("expected a list of steps"));
  CHECK_THAT(options::check_value(train, yaml("[{resize: 72, center_crop: 64}]")),
             Contains("item 0: expected a name or a map of one name to its parameters"));
  CHECK_THAT(options::check_value(train, yaml("[resize, 3]")), Contains("item 1:"));
  CHECK(options::accepted(train) == "a list of steps, each a name or {name: its parameters}, or null");
}
