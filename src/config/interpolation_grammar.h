// OmegaConf's interpolation grammar, parsed into a small tree: a config string is text pieces and
// `${...}` interpolations; an interpolation is a node path (`${.a.b[0]}`) or a resolver call
// (`${name:arg,...}`) whose arguments are typed elements (ints, floats, bools, null, strings,
// quoted strings, lists, dicts, nested interpolations). Private to the interpolation engine.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "trainer/config/node.h"

namespace trainer::config::grammar {

struct Interpolation;

// Literal text, or an interpolation whose value is converted with Python's str().
struct Piece {
  std::string text;
  std::unique_ptr<Interpolation> interpolation;  // set for interpolation pieces
};

// One resolver argument (or the value of `${oc.decode:...}`).
struct Element {
  enum class Kind {
    kConstant,       // typed primitive or plain string
    kInterpolation,  // exactly one interpolation: keeps the target's type
    kConcat,         // text and interpolations joined into a string (quoted strings too)
    kList,
    kDict,
  };
  Kind kind = Kind::kConstant;
  Node constant;
  std::vector<Piece> pieces;   // kInterpolation (one piece), kConcat
  std::vector<Element> items;  // kList items, kDict values
  std::vector<Node> keys;      // kDict keys (typed: "1" is an int key)
};

struct Interpolation {
  bool is_resolver = false;
  std::string text;  // as written, "${a.b}", for messages
  // Node interpolation: `dots` leading dots (0 = absolute), then keys (literal or interpolated).
  int dots = 0;
  std::vector<Piece> keys;
  // Resolver: name parts (joined with '.'), then the arguments.
  std::vector<Piece> name;
  std::vector<Element> args;
};

// A whole config string. A value that is exactly one interpolation keeps the target's type.
struct Template {
  std::vector<Piece> pieces;
  bool is_single_interpolation() const { return pieces.size() == 1 && pieces[0].interpolation != nullptr; }
};

// Thrown on malformed input; `position` is the byte offset where parsing stopped.
class SyntaxError : public std::runtime_error {
 public:
  SyntaxError(const std::string& message, size_t position) : std::runtime_error(message), position_(position) {}
  size_t position() const { return position_; }

 private:
  size_t position_;
};

// Parses a config string value (OmegaConf's top-level rule: `\${` escapes an interpolation).
Template parse_template(std::string_view text);
// Parses one element the way oc.decode does: "1" -> int, "[1,2]" -> list, " 1 " -> " 1 ".
Element parse_element(std::string_view text);
// True for OmegaConf resolver-name identifiers: [A-Za-z_][A-Za-z0-9_-]*.
bool is_identifier(std::string_view text);
// Types an unquoted token the way the grammar does: int, float (incl. inf/nan), bool, null.
// Returns false when the text is none of these (then it is a string).
bool type_token(std::string_view text, Node& out);

}  // namespace trainer::config::grammar
