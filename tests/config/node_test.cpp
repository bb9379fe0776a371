#include "trainer/config/node.h"

#include <string>

#include <catch2/catch.hpp>

using trainer::config::Node;

TEST_CASE("maps keep insertion order and replace in place") {
  Node map = Node::map();
  map.set("b", Node::integer(1));
  map.set("a", Node::integer(2));
  map.set("b", Node::string("x"));
  REQUIRE(map.entries().size() == 2);
  CHECK(map.entries()[0].key == "b");
  CHECK(map.entries()[0].value.as_string() == "x");
  CHECK(map.entries()[1].key == "a");
}

TEST_CASE("merge_into merges maps key by key and replaces lists") {
  Node destination = Node::map();
  Node inner = Node::map();
  inner.set("x", Node::integer(1));
  inner.set("y", Node::integer(2));
  destination.set("inner", inner);
  Node list = Node::list();
  list.push_back(Node::integer(1));
  list.push_back(Node::integer(2));
  destination.set("list", list);

  Node source = Node::map();
  Node source_inner = Node::map();
  source_inner.set("y", Node::integer(3));
  source_inner.set("z", Node::integer(4));
  source.set("inner", source_inner);
  Node source_list = Node::list();
  source_list.push_back(Node::integer(9));
  source.set("list", source_list);

  trainer::config::merge_into(destination, source);
  const Node& merged = *destination.find("inner");
  CHECK(merged.find("x")->as_int() == 1);
  CHECK(merged.find("y")->as_int() == 3);
  CHECK(merged.entries()[2].key == "z");
  CHECK(destination.find("list")->items().size() == 1);
}

TEST_CASE("select follows dotted and bracketed paths") {
  Node root = Node::map();
  Node list = Node::list();
  Node item = Node::map();
  item.set("name", Node::string("first"));
  list.push_back(item);
  root.set("items", list);
  CHECK(trainer::config::select(root, "items[0].name")->as_string() == "first");
  CHECK(trainer::config::select(root, "items.0.name")->as_string() == "first");
  CHECK(trainer::config::select(root, "items.1") == nullptr);
  CHECK(trainer::config::select(root, "nope.x") == nullptr);
  std::vector<std::string> segments;
  CHECK_FALSE(trainer::config::split_key_path("a..b", segments));
}

TEST_CASE("merge_into keeps order and merges existing keys of large maps") {
  // Large enough for merge_into's hash index (src/config/entry_index.h).
  Node destination = Node::map();
  for (int i = 0; i < 1000; i += 2) {
    Node inner = Node::map();
    inner.set("old", Node::integer(i));
    destination.entries().push_back(Node::Entry{"k" + std::to_string(i), inner});
  }
  Node source = Node::map();
  for (int i = 0; i < 1000; ++i) {
    Node inner = Node::map();
    inner.set("new", Node::integer(i));
    source.entries().push_back(Node::Entry{"k" + std::to_string(i), inner});
  }
  trainer::config::merge_into(destination, source);
  REQUIRE(destination.entries().size() == 1000);
  // The even keys stay first in their order and gain "new"; the odd ones follow in source order.
  CHECK(destination.entries()[0].key == "k0");
  CHECK(destination.entries()[499].key == "k998");
  CHECK(destination.entries()[500].key == "k1");
  CHECK(destination.entries()[999].key == "k999");
  const Node& k998 = *destination.find("k998");
  CHECK(k998.find("old")->as_int() == 998);
  CHECK(k998.find("new")->as_int() == 998);
  CHECK(destination.find("k999")->find("old") == nullptr);
}
