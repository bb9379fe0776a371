// Suggestions for misspelt names: the edit distance (optimal string alignment, a swap of
// neighbours costs one), how far a typo may go for a word's length, and case-only differences.
#include "trainer/config/did_you_mean.h"

#include <string>
#include <vector>

#include <catch2/catch.hpp>

using trainer::config::closest_match;
using trainer::config::did_you_mean;
using trainer::config::edit_distance;

TEST_CASE("edit_distance counts insertions, deletions, substitutions and swaps of neighbours") {
  CHECK(edit_distance("", "") == 0);
  CHECK(edit_distance("", "abc") == 3);
  CHECK(edit_distance("abc", "") == 3);
  CHECK(edit_distance("kitten", "sitting") == 3);
  CHECK(edit_distance("max_epochs", "max_epcohs") == 1);  // one swap, not two substitutions
  CHECK(edit_distance("ab", "ba") == 1);
  CHECK(edit_distance("ca", "abc") == 3);  // optimal string alignment: no edit of a swapped pair
  CHECK(edit_distance("lr", "lr") == 0);
  CHECK(edit_distance("Adam", "adam") == 1);  // the distance itself is case-sensitive
}

TEST_CASE("closest_match allows about one edit per three characters, one to three") {
  const std::vector<std::string> keys{"max_epochs", "max_steps", "max_time", "min_epochs"};
  CHECK(closest_match("max_epoch", keys) == "max_epochs");
  CHECK(closest_match("max_stpes", keys) == "max_steps");
  CHECK(closest_match("maxepochz", keys) == "max_epochs");  // 2 edits in 9 characters
  CHECK(closest_match("epochs", keys).empty());             // 4 edits: too far
  // Short words: one edit at most, and never a replacement of the whole word.
  CHECK(closest_match("lx", {"lr"}) == "lr");
  CHECK(closest_match("x", {"y"}).empty());
  CHECK(closest_match("ab", {"xy"}).empty());
  // Long words: three edits at most.
  CHECK(closest_match("gradient_clip_valeu", {"gradient_clip_val"}) == "gradient_clip_val");
  CHECK(closest_match("gradient_clip", {"gradient_clip_val"}).empty());  // 4 edits
}

TEST_CASE(
    "closest_match prefers a case-only difference, skips the word itself, and takes the first of "
    "equals") {
  CHECK(closest_match("ADAM", {"adamw", "adam"}) == "adam");
  CHECK(closest_match("adam", {"adam"}).empty());  // the same name is no suggestion
  CHECK(closest_match("adam", {"adam", "adamw"}) == "adamw");
  CHECK(closest_match("cnm", {"cnn", "cnx"}) == "cnn");
  CHECK(closest_match("", {"a"}).empty());
  CHECK(closest_match("mlp", {}).empty());
}

TEST_CASE("did_you_mean phrases the suggestion, or says nothing") {
  CHECK(did_you_mean("optimzer", {"optimizer", "scheduler"}) == "Did you mean 'optimizer'?");
  CHECK(did_you_mean("zzz", {"optimizer", "scheduler"}).empty());
}
