// The override lexer on its own: the token sequences ANTLR's longest-match rule gives Hydra's
// OverrideLexer.g4 in each mode, and where lexing stops on a character no token matches.
#include "../../src/config/override_lexer.h"

#include <string>
#include <vector>

#include <catch2/catch.hpp>

namespace {

using namespace trainer::config::override_detail;

struct Lexed {
  std::vector<Tok> types;
  std::vector<std::string> texts;
  size_t stop = 0;
};

Lexed value_tokens(const std::string& text, size_t from = 0) {
  std::vector<Token> tokens;
  Lexed out;
  out.stop = lex_value(text, from, tokens);
  for (const Token& t : tokens) {
    out.types.push_back(t.type);
    out.texts.push_back(text.substr(t.begin, t.end - t.begin));
  }
  return out;
}

std::vector<KeyTok> key_kinds(const std::string& text, size_t& stop) {
  std::vector<KeyToken> tokens;
  stop = lex_key(text, tokens);
  std::vector<KeyTok> out;
  for (const KeyToken& t : tokens) out.push_back(t.kind);
  return out;
}

}  // namespace

TEST_CASE("value mode: the longest token wins, ties go to the grammar's first rule") {
  using V = std::vector<Tok>;
  // `007` is no INT (INT is '0' | [1-9]...): three INT tokens, which the parser joins into a
  // string.
  CHECK(value_tokens("007").types == V{Tok::kInt, Tok::kInt, Tok::kInt, Tok::kEof});
  CHECK(value_tokens("1_000").types == V{Tok::kInt, Tok::kEof});
  CHECK(value_tokens("inf").types == V{Tok::kFloat, Tok::kEof});
  CHECK(value_tokens("-NaN").types == V{Tok::kFloat, Tok::kEof});
  CHECK(value_tokens("Infinity").types == V{Tok::kId, Tok::kEof});
  CHECK(value_tokens("1e3").types == V{Tok::kFloat, Tok::kEof});
  CHECK(value_tokens("1.").types == V{Tok::kFloat, Tok::kEof});
  CHECK(value_tokens("TRUE").types == V{Tok::kBool, Tok::kEof});
  CHECK(value_tokens("trueish").types == V{Tok::kId, Tok::kEof});
  CHECK(value_tokens("NuLL").types == V{Tok::kNull, Tok::kEof});
  CHECK(value_tokens("a\\,b").types == V{Tok::kId, Tok::kEsc, Tok::kId, Tok::kEof});
  CHECK(value_tokens("${a.b}").types == V{Tok::kInterpolation, Tok::kEof});
  CHECK(value_tokens("'a,b'").types == V{Tok::kQuoted, Tok::kEof});
  CHECK(value_tokens("/x").types == V{Tok::kUnquotedChar, Tok::kId, Tok::kEof});
}

TEST_CASE("value mode: punctuation takes its surrounding whitespace") {
  const Lexed lexed = value_tokens("f( a , b )");
  CHECK(lexed.types ==
        std::vector<Tok>{Tok::kId, Tok::kPopen, Tok::kId, Tok::kComma, Tok::kId, Tok::kPclose, Tok::kEof});
  CHECK(lexed.texts == std::vector<std::string>{"f", "( ", "a", " , ", "b", " )", ""});
  const Lexed spaced = value_tokens("a b");
  CHECK(spaced.types == std::vector<Tok>{Tok::kId, Tok::kWs, Tok::kId, Tok::kEof});
  CHECK(value_tokens("[ 1 ]").texts == std::vector<std::string>{"[ ", "1", " ]", ""});
}

TEST_CASE("value mode starts where asked and stops where nothing matches") {
  const Lexed from = value_tokens("key=1", 4);
  CHECK(from.types == std::vector<Tok>{Tok::kInt, Tok::kEof});
  CHECK(from.stop == 5);
  const Lexed hash = value_tokens("a#b");
  CHECK(hash.stop == 1);
  CHECK(hash.types == std::vector<Tok>{Tok::kId});  // no kEof after a stop
  CHECK(value_tokens("x 'open").stop == 2);
  CHECK(value_tokens("").types == std::vector<Tok>{Tok::kEof});
}

TEST_CASE("key mode: prefixes, names, dotted paths, packages; it ends after the first '='") {
  size_t stop = 0;
  CHECK(key_kinds("++db@pkg=x=y", stop) ==
        std::vector<KeyTok>{KeyTok::kPlus, KeyTok::kPlus, KeyTok::kId, KeyTok::kAt, KeyTok::kId, KeyTok::kEqual});
  CHECK(stop == 9);
  CHECK(key_kinds("~a.b.0", stop) == std::vector<KeyTok>{KeyTok::kTilde, KeyTok::kDotPath});
  CHECK(stop == 6);
  CHECK(key_kinds("hydra/launcher=", stop) ==
        std::vector<KeyTok>{KeyTok::kId, KeyTok::kSlash, KeyTok::kId, KeyTok::kEqual});
  CHECK(key_kinds("$x=1", stop) == std::vector<KeyTok>{KeyTok::kKeySpecial, KeyTok::kEqual});
  CHECK(key_kinds("a:b", stop) == std::vector<KeyTok>{KeyTok::kId, KeyTok::kColon, KeyTok::kId});
  CHECK(key_kinds("key = 1", stop) == std::vector<KeyTok>{KeyTok::kId});
  CHECK(stop == 3);  // the space: no key token matches it
  CHECK(whitespace_len("a= \t b", 2) == 3);
  CHECK(whitespace_len("ab", 1) == 0);
}
