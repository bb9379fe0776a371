// Internal to the override grammar: Hydra's OverrideLexer.g4 (Hydra 1.3) as a hand-written
// two-mode lexer, KEY mode up to the first '=' and VALUE mode after it. It reproduces ANTLR's
// rule: at each position the longest token wins, ties go to the rule listed first in the grammar.
// That rule alone decides the typing quirks (`007` is three INT tokens, hence a string; `inf` is a
// FLOAT, `Infinity` an ID), so following it is what keeps the parser identical to Hydra.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace trainer::config::override_detail {

// The grammar's whitespace.
inline bool is_ws(char c) { return c == ' ' || c == '\t'; }

// The length of the whitespace at `p` (0 when none).
size_t whitespace_len(std::string_view text, size_t p);

// KEY mode tokens, in the grammar's rule order.
enum class KeyTok : uint8_t { kEqual, kTilde, kPlus, kAt, kColon, kSlash, kId, kKeySpecial, kDotPath };

struct KeyToken {
  KeyTok kind;
  size_t begin, end;
};

// Lexes the key part of an override into `tokens` (cleared first): up to and including the first
// '='. Returns where it stopped: after that '=', at the end of the text, or at a character that
// no key token matches.
size_t lex_key(std::string_view text, std::vector<KeyToken>& tokens);

// VALUE mode token types in the grammar's rule order (ties between equally long matches go to the
// first).
enum class Tok : uint8_t {
  kPopen,
  kComma,
  kPclose,
  kBracketOpen,
  kBracketClose,
  kBraceOpen,
  kBraceClose,
  kColon,
  kEqual,
  kFloat,
  kInt,
  kBool,
  kNull,
  kUnquotedChar,
  kId,
  kEsc,
  kWs,
  kQuoted,
  kInterpolation,
  kEof
};

struct Token {
  Tok type;
  uint32_t begin, end;
};

// Lexes `text` from `p` to its end into `tokens` (cleared first), closed by a kEof token, and
// returns text.size(). Where no value token matches (an unclosed quote, '#'), returns that
// position instead, the tokens before it in `tokens` and no kEof.
size_t lex_value(std::string_view text, size_t p, std::vector<Token>& tokens);

}  // namespace trainer::config::override_detail
