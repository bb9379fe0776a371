// The one UTF-8 encoder: each length's boundaries, checked against Python's str.encode('utf-8')
// (surrogatepass for the lone surrogate).
#include "../../src/config/utf8.h"

#include <string>

#include <catch2/catch.hpp>

namespace {

std::string utf8(char32_t code_point) {
  std::string out = "<";
  trainer::config::detail::append_utf8(out, code_point);
  return out.substr(1);
}

}  // namespace

TEST_CASE("append_utf8 encodes one to four bytes and appends") {
  CHECK(utf8(U'\0') == std::string(1, '\0'));
  CHECK(utf8(U'A') == "A");
  CHECK(utf8(0x7F) == "\x7F");
  CHECK(utf8(0x80) == "\xC2\x80");
  CHECK(utf8(0x85) == "\xC2\x85");  // NEL, yaml-cpp's `\N`
  CHECK(utf8(0xE9) == "\xC3\xA9");
  CHECK(utf8(0x7FF) == "\xDF\xBF");
  CHECK(utf8(0x800) == "\xE0\xA0\x80");
  CHECK(utf8(0x2028) == "\xE2\x80\xA8");
  CHECK(utf8(0xD800) == "\xED\xA0\x80");
  CHECK(utf8(0xFFFF) == "\xEF\xBF\xBF");
  CHECK(utf8(0x10000) == "\xF0\x90\x80\x80");
  CHECK(utf8(0x1F600) == "\xF0\x9F\x98\x80");
  CHECK(utf8(0x10FFFF) == "\xF4\x8F\xBF\xBF");
  std::string out = "a";
  trainer::config::detail::append_utf8(out, 0xE9);
  trainer::config::detail::append_utf8(out, U'b');
  CHECK(out ==
        "a\xC3\xA9"
        "b");
}
