// Tests of the YAML writer. Every expected text below is the real output of OmegaConf 2.3.1's
// OmegaConf.to_yaml (PyYAML 6.0.3) for the same value, pasted in as literal data.
#include <cmath>
#include <limits>
#include <string>

#include <catch2/catch.hpp>

#include "trainer/config/yaml.h"

using trainer::config::load_yaml_string;
using trainer::config::Node;
using trainer::config::NodeType;
using trainer::config::to_yaml;

namespace {

struct TextCase {
  const char* input;
  const char* expected;
};

Node map_of(std::string key, Node value) {
  Node map = Node::map();
  map.set(std::move(key), std::move(value));
  return map;
}

}  // namespace

TEST_CASE("strings are quoted exactly when OmegaConf.to_yaml quotes them", "[yaml][writer]") {
  // {input, OmegaConf.to_yaml({'k': input})}
  static const TextCase kCases[] = {
      {"", "k: ''\n"},
      {" ", "k: ' '\n"},
      {"a", "k: a\n"},
      {"abc", "k: abc\n"},
      {"hello world", "k: hello world\n"},
      {"yes", "k: 'yes'\n"},
      {"Yes", "k: 'Yes'\n"},
      {"YES", "k: 'YES'\n"},
      {"no", "k: 'no'\n"},
      {"on", "k: 'on'\n"},
      {"On", "k: 'On'\n"},
      {"off", "k: 'off'\n"},
      {"OFF", "k: 'OFF'\n"},
      {"true", "k: 'true'\n"},
      {"True", "k: 'True'\n"},
      {"false", "k: 'false'\n"},
      {"y", "k: 'y'\n"},
      {"Y", "k: 'Y'\n"},
      {"n", "k: 'n'\n"},
      {"N", "k: 'N'\n"},
      {"null", "k: 'null'\n"},
      {"Null", "k: 'Null'\n"},
      {"NULL", "k: 'NULL'\n"},
      {"~", "k: '~'\n"},
      {"0", "k: '0'\n"},
      {"1", "k: '1'\n"},
      {"-1", "k: '-1'\n"},
      {"+1", "k: '+1'\n"},
      {"010", "k: '010'\n"},
      {"0x10", "k: '0x10'\n"},
      {"0o10", "k: 0o10\n"},
      {"0b11", "k: '0b11'\n"},
      {"08", "k: '08'\n"},
      {"1_000", "k: '1_000'\n"},
      {"0_", "k: '0_'\n"},
      {"12:30", "k: '12:30'\n"},
      {"1:70", "k: 1:70\n"},
      {"1.0", "k: '1.0'\n"},
      {"1.", "k: '1.'\n"},
      {".5", "k: '.5'\n"},
      {"1e3", "k: '1e3'\n"},
      {"1E3", "k: '1E3'\n"},
      {"1e-4", "k: '1e-4'\n"},
      {"1.5e3", "k: '1.5e3'\n"},
      {".inf", "k: '.inf'\n"},
      {"-.inf", "k: '-.inf'\n"},
      {".nan", "k: '.nan'\n"},
      {"inf", "k: 'inf'\n"},
      {"-inf", "k: '-inf'\n"},
      {"nan", "k: 'nan'\n"},
      {"NaN", "k: 'NaN'\n"},
      {"Infinity", "k: 'Infinity'\n"},
      {"infinity", "k: 'infinity'\n"},
      {"2020-01-01", "k: '2020-01-01'\n"},
      {"2020-1-1 10:00:00", "k: '2020-1-1 10:00:00'\n"},
      {"2001-12-14t21:59:43.10-05:00", "k: '2001-12-14t21:59:43.10-05:00'\n"},
      {"=", "k: '='\n"},
      {"<<", "k: '<<'\n"},
      {"!", "k: '!'\n"},
      {"&", "k: '&'\n"},
      {"*", "k: '*'\n"},
      {"&a", "k: '&a'\n"},
      {"*a", "k: '*a'\n"},
      {"!tag", "k: '!tag'\n"},
      {"-", "k: '-'\n"},
      {"- a", "k: '- a'\n"},
      {"-a", "k: -a\n"},
      {"--", "k: --\n"},
      {"---", "k: '---'\n"},
      {"--- a", "k: '--- a'\n"},
      {"...", "k: '...'\n"},
      {"....", "k: '....'\n"},
      {"\?", "k: '\?'\n"},
      {"\? a", "k: '\? a'\n"},
      {"\?a", "k: \?a\n"},
      {":", "k: ':'\n"},
      {": a", "k: ': a'\n"},
      {":a", "k: :a\n"},
      {"a:b", "k: a:b\n"},
      {"a: b", "k: 'a: b'\n"},
      {"a :b", "k: a :b\n"},
      {"a:", "k: 'a:'\n"},
      {"a #b", "k: 'a #b'\n"},
      {"a#b", "k: a#b\n"},
      {"#a", "k: '#a'\n"},
      {",a", "k: ',a'\n"},
      {"a,b", "k: a,b\n"},
      {"[a", "k: '[a'\n"},
      {"a[0]", "k: a[0]\n"},
      {"]", "k: ']'\n"},
      {"{a", "k: '{a'\n"},
      {"a}", "k: a}\n"},
      {"{}", "k: '{}'\n"},
      {"[]", "k: '[]'\n"},
      {"|", "k: '|'\n"},
      {">", "k: '>'\n"},
      {"'a", "k: '''a'\n"},
      {"a'b", "k: a'b\n"},
      {"\"a", "k: '\"a'\n"},
      {"a\"b", "k: a\"b\n"},
      {"%a", "k: '%a'\n"},
      {"@a", "k: '@a'\n"},
      {"`a", "k: '`a'\n"},
      {"a@b", "k: a@b\n"},
      {"${a.b}", "k: ${a.b}\n"},
      {"${oc.env:HOME}", "k: ${oc.env:HOME}\n"},
      {"pre_${x}_post", "k: pre_${x}_post\n"},
      {"${a}:${b}", "k: ${a}:${b}\n"},
      {"\\", "k: \\\n"},
      {"a\\b", "k: a\\b\n"},
      {" a", "k: ' a'\n"},
      {"a ", "k: 'a '\n"},
      {" a ", "k: ' a '\n"},
      {"a  b", "k: a  b\n"},
      {"a\nb", "k: 'a\n\n  b'\n"},
      {"a\n", "k: 'a\n\n  '\n"},
      {"\na", "k: '\n\n  a'\n"},
      {"a\n\nb", "k: 'a\n\n\n  b'\n"},
      {"a \nb", "k: \"a \\nb\"\n"},
      {"a\n b", "k: \"a\\n b\"\n"},
      {"\n", "k: '\n\n  '\n"},
      {"\011", "k: \"\\t\"\n"},
      {"a\011b", "k: \"a\\tb\"\n"},
      {"\007", "k: \"\\a\"\n"},
      {"\033", "k: \"\\e\"\n"},
      {"\177", "k: \"\\x7F\"\n"},
      // NEL, U+2028, U+2029: OmegaConf writes them raw in single quotes ('\302\205  '), which does
      // not read back; the writer escapes them (see "NEL, U+2028 and U+2029 are written ...").
      {"\302\205", "k: \"\\N\"\n"},
      {"\302\240", "k: \302\240\n"},
      {"\302\240a", "k: \302\240a\n"},
      {"a\302\2401", "k: a\302\2401\n"},
      {"\302\2401", "k: '\302\2401'\n"},
      {"caf\303\251", "k: caf\303\251\n"},
      {"\346\227\245\346\234\254\350\252\236", "k: \346\227\245\346\234\254\350\252\236\n"},
      {"\360\237\230\200", "k: \360\237\230\200\n"},
      {"a\360\237\230\200", "k: a\360\237\230\200\n"},
      {"\357\273\277", "k: \"\\uFEFF\"\n"},
      {"\342\200\250", "k: \"\\L\"\n"},      // OmegaConf: k: '\342\200\250  '
      {"a\342\200\251b", "k: \"a\\Pb\"\n"},  // OmegaConf: k: 'a\342\200\251  b'
      {"\355\237\277", "k: \355\237\277\n"},
      {"\356\200\200", "k: \356\200\200\n"},
      {"\357\277\275", "k: \357\277\275\n"},
      {"\357\277\276", "k: \"\\uFFFE\"\n"},
      {"\331\241\331\242", "k: '\331\241\331\242'\n"},
      {"\357\274\221", "k: '\357\274\221'\n"},
      {" 1", "k: ' 1'\n"},
      {"1 ", "k: '1 '\n"},
      {" 1.5 ", "k: ' 1.5 '\n"},
      {"1\n", "k: '1\n\n  '\n"},
      {"1_0.5", "k: '1_0.5'\n"},
      {"1__0", "k: '1__0'\n"},
      {"_1", "k: _1\n"},
      {"1_", "k: '1_'\n"},
      {"0x_", "k: '0x_'\n"},
      {"+.5", "k: '+.5'\n"},
      {"-.5", "k: '-.5'\n"},
      {"1.2.3", "k: 1.2.3\n"},
      {"1e", "k: 1e\n"},
      {"e3", "k: e3\n"},
      {"1e+3", "k: '1e+3'\n"},
      {"-0", "k: '-0'\n"},
      {"00", "k: '00'\n"},
      {"0.1_2", "k: '0.1_2'\n"},
      {"190:20:30.15", "k: '190:20:30.15'\n"},
      {"1:30.5", "k: '1:30.5'\n"},
      {"\?\?\?", "k: \?\?\?\n"},
      {"a\?\?\?", "k: a\?\?\?\n"},
      {"'", "k: ''''\n"},
      {"''", "k: ''''''\n"},
      {"\"", "k: '\"'\n"},
      {"it's", "k: it's\n"},
      {"C:\\path\\to", "k: C:\\path\\to\n"},
      {"http://x.com/a\?b=c#d", "k: http://x.com/a\?b=c#d\n"},
      {"a=b", "k: a=b\n"},
      {"key=value,other", "k: key=value,other\n"},
      {"x y z", "k: x y z\n"},
      {"-1.5", "k: '-1.5'\n"},
      {"+", "k: +\n"},
      {"++", "k: ++\n"},
      {"+a", "k: +a\n"},
      {".", "k: .\n"},
      {"..", "k: ..\n"},
      {".a", "k: .a\n"},
      {"a.", "k: a.\n"},
      {"1a", "k: 1a\n"},
      {"0xZZ", "k: 0xZZ\n"},
      {"yes!", "k: yes!\n"},
      {"on ", "k: 'on '\n"},
      {" off", "k: ' off'\n"},
      {"TRUE ", "k: 'TRUE '\n"},
      {"tRUE", "k: tRUE\n"},
      {"a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a "
       "a a a a a ",
       "k: 'a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a\n  a a a "
       "a a a a a a a a '\n"},
      {"word word word word word word word word word word word word word word word word word word "
       "word word word word word word word word word word word word end",
       "k: word word word word word word word word word word word word word word word word\n  word "
       "word word word word word word word word word word word word word end\n"},
      {"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
       "xxxxxxxxx",
       "k: "
       "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
       "xxxxxxxxx\n"},
      {"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx "
       "y",
       "k: "
       "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
       "\n  y\n"},
      {"abcdefghi abcdefghi abcdefghi abcdefghi abcdefghi abcdefghi abcdefghi abcdefghi abcdefghi "
       "abcdefghi abcdefghi abcdefghi",
       "k: abcdefghi abcdefghi abcdefghi abcdefghi abcdefghi abcdefghi abcdefghi abcdefghi\n  "
       "abcdefghi abcdefghi abcdefghi abcdefghi\n"},
      {"a\nb b b b b b b b b b b b b b b b b b b b b b b b b b b b b b b b b b b b b b b b b b b b "
       "b b b b b b b b b b b b b b b b ",
       "k: 'a\n\n  b b b b b b b b b b b b b b b b b b b b b b b b b b b b b b b b b b b b b b b "
       "b\n  b b b b b b b b b b b b b b b b b b b b '\n"},
      {"\"quoted\" \"quoted\" \"quoted\" \"quoted\" \"quoted\" \"quoted\" \"quoted\" \"quoted\" "
       "\"quoted\" \"quoted\" \"quoted\" \"quoted\" \"quoted\" \"quoted\" \"quoted\" ",
       "k: '\"quoted\" \"quoted\" \"quoted\" \"quoted\" \"quoted\" \"quoted\" \"quoted\" "
       "\"quoted\" \"quoted\"\n  \"quoted\" \"quoted\" \"quoted\" \"quoted\" \"quoted\" \"quoted\" "
       "'\n"},
      {"it's it's it's it's it's it's it's it's it's it's it's it's it's it's it's it's it's it's "
       "it's it's it's it's it's it's it's ",
       "k: 'it''s it''s it''s it''s it''s it''s it''s it''s it''s it''s it''s it''s it''s\n  it''s "
       "it''s it''s it''s it''s it''s it''s it''s it''s it''s it''s it''s '\n"},
      {"tab\011here tab\011here tab\011here tab\011here tab\011here tab\011here tab\011here "
       "tab\011here tab\011here tab\011here ",
       "k: \"tab\\there tab\\there tab\\there tab\\there tab\\there tab\\there tab\\there "
       "tab\\there\\\n  \\ tab\\there tab\\there \"\n"},
      {"long long long long long long long long long long long long long long long long long long "
       "long long \nline line line line line line line line line line line line line line line "
       "line line line line line ",
       "k: \"long long long long long long long long long long long long long long long long\\\n  "
       "\\ long long long long \\nline line line line line line line line line line line line\\\n  "
       "\\ line line line line line line line line \"\n"},
      {"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa b",
       "k: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n  b\n"},
      {"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa b",
       "k: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n  "
       "b\n"},
      {"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa b",
       "k: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n  "
       "b\n"},
      {"a "
       "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
       "bbbbbbbbb c",
       "k: a "
       "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
       "bbbbbbbbb\n  c\n"},
      {"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx y z w",
       "k: xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx y z\n  w\n"},
      {" w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w "
       "w w w w w ",
       "k: ' w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w\n  w w "
       "w w w w w w w w w '\n"},
      {"\007w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w "
       "w w w w w w w ",
       "k: \"\\aw w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w\\\n  "
       "\\ w w w w w w w w w w w w \"\n"},
      {"w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w "
       "\011",
       "k: \"w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w\\\n  \\ "
       "w w w w w w \\t\"\n"},
  };
  for (const TextCase& c : kCases) {
    INFO("value: [" << c.input << "]");
    CHECK(to_yaml(map_of("k", Node::string(c.input))) == c.expected);
  }
}

TEST_CASE("strings inside lists", "[yaml][writer]") {
  // {input, OmegaConf.to_yaml({'k': [input]})}
  static const TextCase kCases[] = {
      {"", "k:\n- ''\n"},
      {" ", "k:\n- ' '\n"},
      {"a", "k:\n- a\n"},
      {"abc", "k:\n- abc\n"},
      {"hello world", "k:\n- hello world\n"},
      {"yes", "k:\n- 'yes'\n"},
      {"Yes", "k:\n- 'Yes'\n"},
      {"YES", "k:\n- 'YES'\n"},
      {"no", "k:\n- 'no'\n"},
      {"on", "k:\n- 'on'\n"},
      {"On", "k:\n- 'On'\n"},
      {"off", "k:\n- 'off'\n"},
      {"OFF", "k:\n- 'OFF'\n"},
      {"true", "k:\n- 'true'\n"},
      {"True", "k:\n- 'True'\n"},
      {"false", "k:\n- 'false'\n"},
      {"y", "k:\n- 'y'\n"},
      {"Y", "k:\n- 'Y'\n"},
      {"n", "k:\n- 'n'\n"},
      {"N", "k:\n- 'N'\n"},
      {"null", "k:\n- 'null'\n"},
      {"Null", "k:\n- 'Null'\n"},
      {"NULL", "k:\n- 'NULL'\n"},
      {"~", "k:\n- '~'\n"},
      {"0", "k:\n- '0'\n"},
      {"1", "k:\n- '1'\n"},
      {"-1", "k:\n- '-1'\n"},
      {"+1", "k:\n- '+1'\n"},
      {"010", "k:\n- '010'\n"},
      {"0x10", "k:\n- '0x10'\n"},
      {"0o10", "k:\n- 0o10\n"},
      {"0b11", "k:\n- '0b11'\n"},
      {"08", "k:\n- '08'\n"},
      {"1_000", "k:\n- '1_000'\n"},
      {"0_", "k:\n- '0_'\n"},
      {"12:30", "k:\n- '12:30'\n"},
      {"1:70", "k:\n- 1:70\n"},
      {"1.0", "k:\n- '1.0'\n"},
      {"1.", "k:\n- '1.'\n"},
      {".5", "k:\n- '.5'\n"},
      {"1e3", "k:\n- '1e3'\n"},
      {"1E3", "k:\n- '1E3'\n"},
      {"1e-4", "k:\n- '1e-4'\n"},
      {"1.5e3", "k:\n- '1.5e3'\n"},
      {".inf", "k:\n- '.inf'\n"},
      {"-.inf", "k:\n- '-.inf'\n"},
      {".nan", "k:\n- '.nan'\n"},
      {"inf", "k:\n- 'inf'\n"},
      {"-inf", "k:\n- '-inf'\n"},
      {"nan", "k:\n- 'nan'\n"},
      {"NaN", "k:\n- 'NaN'\n"},
      {"Infinity", "k:\n- 'Infinity'\n"},
      {"infinity", "k:\n- 'infinity'\n"},
      {"2020-01-01", "k:\n- '2020-01-01'\n"},
      {"2020-1-1 10:00:00", "k:\n- '2020-1-1 10:00:00'\n"},
      {"2001-12-14t21:59:43.10-05:00", "k:\n- '2001-12-14t21:59:43.10-05:00'\n"},
      {"=", "k:\n- '='\n"},
      {"<<", "k:\n- '<<'\n"},
      {"!", "k:\n- '!'\n"},
      {"&", "k:\n- '&'\n"},
      {"*", "k:\n- '*'\n"},
      {"&a", "k:\n- '&a'\n"},
      {"*a", "k:\n- '*a'\n"},
      {"!tag", "k:\n- '!tag'\n"},
      {"-", "k:\n- '-'\n"},
      {"- a", "k:\n- '- a'\n"},
      {"-a", "k:\n- -a\n"},
      {"--", "k:\n- --\n"},
      {"---", "k:\n- '---'\n"},
      {"--- a", "k:\n- '--- a'\n"},
      {"...", "k:\n- '...'\n"},
      {"....", "k:\n- '....'\n"},
      {"\?", "k:\n- '\?'\n"},
      {"\? a", "k:\n- '\? a'\n"},
      {"\?a", "k:\n- \?a\n"},
      {":", "k:\n- ':'\n"},
      {": a", "k:\n- ': a'\n"},
      {":a", "k:\n- :a\n"},
      {"a:b", "k:\n- a:b\n"},
      {"a: b", "k:\n- 'a: b'\n"},
      {"a :b", "k:\n- a :b\n"},
      {"a:", "k:\n- 'a:'\n"},
      {"a #b", "k:\n- 'a #b'\n"},
      {"a#b", "k:\n- a#b\n"},
      {"#a", "k:\n- '#a'\n"},
      {",a", "k:\n- ',a'\n"},
      {"a,b", "k:\n- a,b\n"},
      {"[a", "k:\n- '[a'\n"},
      {"a[0]", "k:\n- a[0]\n"},
      {"]", "k:\n- ']'\n"},
      {"{a", "k:\n- '{a'\n"},
      {"a}", "k:\n- a}\n"},
      {"{}", "k:\n- '{}'\n"},
      {"[]", "k:\n- '[]'\n"},
      {"|", "k:\n- '|'\n"},
      {">", "k:\n- '>'\n"},
      {"'a", "k:\n- '''a'\n"},
      {"a'b", "k:\n- a'b\n"},
      {"\"a", "k:\n- '\"a'\n"},
      {"a\"b", "k:\n- a\"b\n"},
      {"%a", "k:\n- '%a'\n"},
      {"@a", "k:\n- '@a'\n"},
      {"`a", "k:\n- '`a'\n"},
      {"a@b", "k:\n- a@b\n"},
      {"${a.b}", "k:\n- ${a.b}\n"},
      {"${oc.env:HOME}", "k:\n- ${oc.env:HOME}\n"},
      {"pre_${x}_post", "k:\n- pre_${x}_post\n"},
      {"${a}:${b}", "k:\n- ${a}:${b}\n"},
      {"\\", "k:\n- \\\n"},
      {"a\\b", "k:\n- a\\b\n"},
      {" a", "k:\n- ' a'\n"},
      {"a ", "k:\n- 'a '\n"},
      {" a ", "k:\n- ' a '\n"},
      {"a  b", "k:\n- a  b\n"},
      {"a\nb", "k:\n- 'a\n\n  b'\n"},
      {"a\n", "k:\n- 'a\n\n  '\n"},
      {"\na", "k:\n- '\n\n  a'\n"},
      {"a\n\nb", "k:\n- 'a\n\n\n  b'\n"},
      {"a \nb", "k:\n- \"a \\nb\"\n"},
      {"a\n b", "k:\n- \"a\\n b\"\n"},
      {"\n", "k:\n- '\n\n  '\n"},
      {"\011", "k:\n- \"\\t\"\n"},
      {"a\011b", "k:\n- \"a\\tb\"\n"},
      {"\007", "k:\n- \"\\a\"\n"},
      {"\033", "k:\n- \"\\e\"\n"},
      {"\177", "k:\n- \"\\x7F\"\n"},
      {"\302\205", "k:\n- \"\\N\"\n"},  // OmegaConf: - '\302\205  ' (does not read back)
      {"\302\240", "k:\n- \302\240\n"},
      {"\302\240a", "k:\n- \302\240a\n"},
      {"a\302\2401", "k:\n- a\302\2401\n"},
      {"\302\2401", "k:\n- '\302\2401'\n"},
      {"caf\303\251", "k:\n- caf\303\251\n"},
      {"\346\227\245\346\234\254\350\252\236", "k:\n- \346\227\245\346\234\254\350\252\236\n"},
      {"\360\237\230\200", "k:\n- \360\237\230\200\n"},
      {"a\360\237\230\200", "k:\n- a\360\237\230\200\n"},
      {"\357\273\277", "k:\n- \"\\uFEFF\"\n"},
      {"\342\200\250", "k:\n- \"\\L\"\n"},      // OmegaConf: - '\342\200\250  '
      {"a\342\200\251b", "k:\n- \"a\\Pb\"\n"},  // OmegaConf: - 'a\342\200\251  b'
      {"\355\237\277", "k:\n- \355\237\277\n"},
      {"\356\200\200", "k:\n- \356\200\200\n"},
      {"\357\277\275", "k:\n- \357\277\275\n"},
      {"\357\277\276", "k:\n- \"\\uFFFE\"\n"},
      {"\331\241\331\242", "k:\n- '\331\241\331\242'\n"},
      {"\357\274\221", "k:\n- '\357\274\221'\n"},
      {" 1", "k:\n- ' 1'\n"},
      {"1 ", "k:\n- '1 '\n"},
      {" 1.5 ", "k:\n- ' 1.5 '\n"},
      {"1\n", "k:\n- '1\n\n  '\n"},
      {"1_0.5", "k:\n- '1_0.5'\n"},
      {"1__0", "k:\n- '1__0'\n"},
      {"_1", "k:\n- _1\n"},
      {"1_", "k:\n- '1_'\n"},
      {"0x_", "k:\n- '0x_'\n"},
      {"+.5", "k:\n- '+.5'\n"},
      {"-.5", "k:\n- '-.5'\n"},
      {"1.2.3", "k:\n- 1.2.3\n"},
      {"1e", "k:\n- 1e\n"},
      {"e3", "k:\n- e3\n"},
      {"1e+3", "k:\n- '1e+3'\n"},
      {"-0", "k:\n- '-0'\n"},
      {"00", "k:\n- '00'\n"},
      {"0.1_2", "k:\n- '0.1_2'\n"},
      {"190:20:30.15", "k:\n- '190:20:30.15'\n"},
      {"1:30.5", "k:\n- '1:30.5'\n"},
      {"\?\?\?", "k:\n- \?\?\?\n"},
      {"a\?\?\?", "k:\n- a\?\?\?\n"},
      {"'", "k:\n- ''''\n"},
      {"''", "k:\n- ''''''\n"},
      {"\"", "k:\n- '\"'\n"},
      {"it's", "k:\n- it's\n"},
      {"C:\\path\\to", "k:\n- C:\\path\\to\n"},
      {"http://x.com/a\?b=c#d", "k:\n- http://x.com/a\?b=c#d\n"},
      {"a=b", "k:\n- a=b\n"},
      {"key=value,other", "k:\n- key=value,other\n"},
      {"x y z", "k:\n- x y z\n"},
      {"-1.5", "k:\n- '-1.5'\n"},
      {"+", "k:\n- +\n"},
      {"++", "k:\n- ++\n"},
      {"+a", "k:\n- +a\n"},
      {".", "k:\n- .\n"},
      {"..", "k:\n- ..\n"},
      {".a", "k:\n- .a\n"},
      {"a.", "k:\n- a.\n"},
      {"1a", "k:\n- 1a\n"},
      {"0xZZ", "k:\n- 0xZZ\n"},
      {"yes!", "k:\n- yes!\n"},
      {"on ", "k:\n- 'on '\n"},
      {" off", "k:\n- ' off'\n"},
      {"TRUE ", "k:\n- 'TRUE '\n"},
      {"tRUE", "k:\n- tRUE\n"},
      {"a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a "
       "a a a a a ",
       "k:\n- 'a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a\n  "
       "a a a a a a a a a a '\n"},
      {"word word word word word word word word word word word word word word word word word word "
       "word word word word word word word word word word word word end",
       "k:\n- word word word word word word word word word word word word word word word word\n  "
       "word word word word word word word word word word word word word word end\n"},
      {"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
       "xxxxxxxxx",
       "k:\n- "
       "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
       "xxxxxxxxx\n"},
      {"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx "
       "y",
       "k:\n- "
       "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
       "\n  y\n"},
      {"abcdefghi abcdefghi abcdefghi abcdefghi abcdefghi abcdefghi abcdefghi abcdefghi abcdefghi "
       "abcdefghi abcdefghi abcdefghi",
       "k:\n- abcdefghi abcdefghi abcdefghi abcdefghi abcdefghi abcdefghi abcdefghi abcdefghi\n  "
       "abcdefghi abcdefghi abcdefghi abcdefghi\n"},
      {"a\nb b b b b b b b b b b b b b b b b b b b b b b b b b b b b b b b b b b b b b b b b b b b "
       "b b b b b b b b b b b b b b b b ",
       "k:\n- 'a\n\n  b b b b b b b b b b b b b b b b b b b b b b b b b b b b b b b b b b b b b b "
       "b b\n  b b b b b b b b b b b b b b b b b b b b '\n"},
      {"\"quoted\" \"quoted\" \"quoted\" \"quoted\" \"quoted\" \"quoted\" \"quoted\" \"quoted\" "
       "\"quoted\" \"quoted\" \"quoted\" \"quoted\" \"quoted\" \"quoted\" \"quoted\" ",
       "k:\n- '\"quoted\" \"quoted\" \"quoted\" \"quoted\" \"quoted\" \"quoted\" \"quoted\" "
       "\"quoted\" \"quoted\"\n  \"quoted\" \"quoted\" \"quoted\" \"quoted\" \"quoted\" \"quoted\" "
       "'\n"},
      {"it's it's it's it's it's it's it's it's it's it's it's it's it's it's it's it's it's it's "
       "it's it's it's it's it's it's it's ",
       "k:\n- 'it''s it''s it''s it''s it''s it''s it''s it''s it''s it''s it''s it''s it''s "
       "it''s\n  it''s it''s it''s it''s it''s it''s it''s it''s it''s it''s it''s '\n"},
      {"tab\011here tab\011here tab\011here tab\011here tab\011here tab\011here tab\011here "
       "tab\011here tab\011here tab\011here ",
       "k:\n- \"tab\\there tab\\there tab\\there tab\\there tab\\there tab\\there tab\\there "
       "tab\\there\\\n  \\ tab\\there tab\\there \"\n"},
      {"long long long long long long long long long long long long long long long long long long "
       "long long \nline line line line line line line line line line line line line line line "
       "line line line line line ",
       "k:\n- \"long long long long long long long long long long long long long long long "
       "long\\\n  \\ long long long long \\nline line line line line line line line line line line "
       "line\\\n  \\ line line line line line line line line \"\n"},
      {"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa b",
       "k:\n- aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n  "
       "b\n"},
      {"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa b",
       "k:\n- aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n  "
       "b\n"},
      {"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa b",
       "k:\n- aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n  "
       "b\n"},
      {"a "
       "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
       "bbbbbbbbb c",
       "k:\n- a "
       "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
       "bbbbbbbbb\n  c\n"},
      {"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx y z w",
       "k:\n- xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx y z\n  "
       "w\n"},
      {" w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w "
       "w w w w w ",
       "k:\n- ' w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w\n  w "
       "w w w w w w w w w w '\n"},
      {"\007w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w "
       "w w w w w w w ",
       "k:\n- \"\\aw w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w "
       "w\\\n  \\ w w w w w w w w w w w \"\n"},
      {"w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w "
       "\011",
       "k:\n- \"w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w "
       "w\\\n  \\ w w w w w \\t\"\n"},
  };
  for (const TextCase& c : kCases) {
    INFO("value: [" << c.input << "]");
    Node list = Node::list();
    list.push_back(Node::string(c.input));
    CHECK(to_yaml(map_of("k", list)) == c.expected);
  }
}

TEST_CASE("keys are quoted by the same rules; long keys use `? key`", "[yaml][writer]") {
  // {input, OmegaConf.to_yaml({input: 1})}
  static const TextCase kCases[] = {
      {"a", "a: 1\n"},
      {"yes", "'yes': 1\n"},
      {"y", "'y': 1\n"},
      {"1", "'1': 1\n"},
      {"1.5", "'1.5': 1\n"},
      {"0x10", "'0x10': 1\n"},
      {"null", "'null': 1\n"},
      {"~", "'~': 1\n"},
      {"", "\? ''\n: 1\n"},
      {" ", "' ': 1\n"},
      {"a b", "a b: 1\n"},
      {"a: b", "'a: b': 1\n"},
      {"-a", "-a: 1\n"},
      {"- a", "'- a': 1\n"},
      {"\?", "'\?': 1\n"},
      {"a\nb", "\? 'a\n\n  b'\n: 1\n"},
      {"${x}", "${x}: 1\n"},
      {"kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk"
       "kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk",
       "kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk"
       "kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk: 1\n"},
      {"kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk"
       "kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk",
       "\? "
       "kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk"
       "kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk\n: 1\n"},
      {"kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk"
       "kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk",
       "\? "
       "kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk"
       "kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk\n: 1\n"},
      {"kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk"
       "kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk",
       "\? "
       "kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk"
       "kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk\n: 1\n"},
      {"w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w "
       "w w w w w w w w w w w w w w w w w w w w w w w w w ",
       "\? 'w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w w\n  w w "
       "w w w w w w w w w w w w w w w w w w w w w w w w w w w w '\n: 1\n"},
      {"\011", "\"\\t\": 1\n"},
      {"caf\303\251", "caf\303\251: 1\n"},
      {"\?\?\?", "\?\?\?: 1\n"},
      {"it's", "it's: 1\n"},
      {"1e3", "'1e3': 1\n"},
      {"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa "
       "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
       "\? aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa "
       "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\n: 1\n"},
  };
  for (const TextCase& c : kCases) {
    INFO("key: [" << c.input << "]");
    CHECK(to_yaml(map_of(c.input, Node::integer(1))) == c.expected);
  }
}

TEST_CASE("floats print as Python repr in PyYAML's float style", "[yaml][writer]") {
  struct FloatCase {
    double value;
    const char* expected;
  };
  // {value, OmegaConf.to_yaml({'k': value})}
  static const FloatCase kCases[] = {
      {0x0.0p+0, "k: 0.0\n"},
      {-0x0.0p+0, "k: -0.0\n"},
      {0x1.0000000000000p+0, "k: 1.0\n"},
      {-0x1.0000000000000p+0, "k: -1.0\n"},
      {0x1.9000000000000p+6, "k: 100.0\n"},
      {0x1.4f8b588e368f1p-17, "k: 1.0e-05\n"},
      {0x1.a36e2eb1c432dp-14, "k: 0.0001\n"},
      {0x1.02c9dedbc309dp-13, "k: 0.0001234\n"},
      {0x1.c6bf526340000p+49, "k: 1000000000000000.0\n"},
      {0x1.1c37937e08000p+53, "k: 1.0e+16\n"},
      {0x1.aa535d3d0c000p+53, "k: 1.5e+16\n"},
      {0x1.5af1d78b58c40p+66, "k: 1.0e+20\n"},
      {0x1.7e43c8800759cp+996, "k: 1.0e+300\n"},
      {0x0.0000000000001p-1022, "k: 5.0e-324\n"},
      {0x1.999999999999ap-4, "k: 0.1\n"},
      {0x1.3333333333334p-2, "k: 0.30000000000000004\n"},
      {0x1.5555555555555p-2, "k: 0.3333333333333333\n"},
      {0x1.0c6f7a0b5ed8dp-22, "k: 2.5e-07\n"},
      {0x1.d6f34547df3b6p+26, "k: 123456789.123\n"},
      {0x1.0f0cf064dd592p+73, "k: 1.0e+22\n"},
      {0x1.56a95319d63e1p+63, "k: 1.2345678901234567e+19\n"},
      {0x1.f75104d551d69p-16, "k: 3.0e-05\n"},
      {0x1.fe185ca57c517p+78, "k: 6.02214076e+23\n"},
      {std::numeric_limits<double>::infinity(), "k: .inf\n"},
      {-std::numeric_limits<double>::infinity(), "k: -.inf\n"},
  };
  for (const FloatCase& c : kCases) {
    INFO("value: " << c.value);
    CHECK(to_yaml(map_of("k", Node::floating(c.value))) == c.expected);
  }
  CHECK(to_yaml(map_of("k", Node::floating(std::nan("")))) == "k: .nan\n");
}

TEST_CASE("ints beyond 64 bits print in decimal, as keys too", "[yaml][writer]") {
  // OmegaConf.to_yaml({10**200: 1, 'k': -10**130, 'l': [2**64, {2**64: 2**65}]})
  Node root = Node::map();
  root.set("1" + std::string(200, '0'), Node::integer(1));
  root.entries().back().key_type = NodeType::kInt;
  root.set("k", Node::integer_text("-1" + std::string(130, '0')));
  Node list = Node::list();
  list.push_back(Node::integer_text("18446744073709551616"));
  Node inner = Node::map();
  inner.set("18446744073709551616", Node::integer_text("36893488147419103232"));
  inner.entries().back().key_type = NodeType::kInt;
  list.push_back(inner);
  root.set("l", list);
  CHECK(to_yaml(root) == "? 1" + std::string(200, '0') + "\n: 1\nk: -1" + std::string(130, '0') +
                             "\nl:\n- 18446744073709551616\n- 18446744073709551616: "
                             "36893488147419103232\n");
  // A round trip through the loader.
  const std::string text = "a: 123456789012345678901234567890\nb: -9223372036854775809\n";
  CHECK(to_yaml(load_yaml_string(text, "t.yaml").root) == text);
}

TEST_CASE("ints, bools, null and missing", "[yaml][writer]") {
  struct IntCase {
    long long value;
    const char* expected;
  };
  static const IntCase kCases[] = {
      {0LL, "k: 0\n"},
      {1LL, "k: 1\n"},
      {-1LL, "k: -1\n"},
      {42LL, "k: 42\n"},
      {9223372036854775807LL, "k: 9223372036854775807\n"},
      {-9223372036854775807LL - 1LL, "k: -9223372036854775808\n"},
  };
  for (const IntCase& c : kCases) CHECK(to_yaml(map_of("k", Node::integer(c.value))) == c.expected);
  CHECK(to_yaml(map_of("k", Node::boolean(true))) == "k: true\n");
  CHECK(to_yaml(map_of("k", Node::boolean(false))) == "k: false\n");
  CHECK(to_yaml(map_of("k", Node())) == "k: null\n");
  CHECK(to_yaml(map_of("k", Node::missing())) == "k: \?\?\?\n");
  // Embedded NULs, which the const char* tables cannot hold: OmegaConf prints "\0".
  CHECK(to_yaml(map_of("k", Node::string(std::string("\0", 1)))) == "k: \"\\0\"\n");
  CHECK(to_yaml(map_of("k", Node::string(std::string("a\0b", 3)))) == "k: \"a\\0b\"\n");
  CHECK(to_yaml(Node::map()) == "{}\n");
  CHECK(to_yaml(Node::list()) == "[]\n");
}

TEST_CASE("whole documents print like OmegaConf.to_yaml", "[yaml][writer]") {
  // {yaml input, OmegaConf.to_yaml(OmegaConf.create(input))}
  static const TextCase kCases[] = {
      {"deep:\n  list:\n  - name: a fairly long string value inside a map inside a list that must "
       "fold past eighty columns\n    multi: \"first line\\nsecond line with enough words to need "
       "folding past the eighty column limit\\n\"\n    dash: \"- leading dash\"\n  - - nested list "
       "item that is long enough to be folded by the emitter at the width of eighty\n      - "
       "\"tab\\tand a long tail of words so that the double quoted style has to fold with "
       "escapes\"\n  \? a key that is very long but still simple because it is shorter than one "
       "hundred and twenty chars\n  : value\n  short: \"  spaced  out  \"\n",
       "deep:\n  list:\n  - name: a fairly long string value inside a map inside a list that must "
       "fold past\n      eighty columns\n    multi: 'first line\n\n      second line with enough "
       "words to need folding past the eighty column limit\n\n      '\n    dash: '- leading "
       "dash'\n  - - nested list item that is long enough to be folded by the emitter at the "
       "width\n      of eighty - \"tab\\tand a long tail of words so that the double quoted style "
       "has\n      to fold with escapes\"\n  a key that is very long but still simple because it "
       "is shorter than one hundred and twenty chars: value\n  short: '  spaced  out  '\n"},
      {"model:\n  name: resnet\n  depth: 50\n  layers: [1, 2, 3]\n  dropout: 0.1\noptim:\n  lr: "
       "1e-3\n  betas: [0.9, 0.999]\n  nesterov: true\n  schedule: null\n  tag: "
       "'\?\?\?'\nempty_map: {}\nempty_list: []\n",
       "model:\n  name: resnet\n  depth: 50\n  layers:\n  - 1\n  - 2\n  - 3\n  dropout: "
       "0.1\noptim:\n  lr: 0.001\n  betas:\n  - 0.9\n  - 0.999\n  nesterov: true\n  schedule: "
       "null\n  tag: \?\?\?\nempty_map: {}\nempty_list: []\n"},
      {"a:\n- - 1\n  - 2\n- - x\n  - []\n  - {}\n- b: 1\n  c:\n  - d: 2\n    e: [3]\n- null\n- "
       "'\?\?\?'\ntop: ${a}\n",
       "a:\n- - 1\n  - 2\n- - x\n  - []\n  - {}\n- b: 1\n  c:\n  - d: 2\n    e:\n    - 3\n- "
       "null\n- \?\?\?\ntop: ${a}\n"},
      {"2: int key\ntrue: bool key\n1.5: float key\n'3': string key\n'yes': quoted\nnested:\n  "
       "0x10: hex key\n",
       "2: int key\ntrue: bool key\n1.5: float key\n'3': string key\n'yes': quoted\nnested:\n  16: "
       "hex key\n"},
      {"server:\n  host: localhost\n  port: 8080\n  paths: ['/api', '/v1', '#x', '- y', 'a: b']\n  "
       "motd: \"Line one\\nLine two\\n\"\n  banner: \"  padded  \"\n  unicode: "
       "\"\346\227\245\346\234\254\350\252\236 caf\303\251\"\n  interp: "
       "\"${server.host}:${server.port}\"\n  long: \"lorem ipsum dolor sit amet consectetur "
       "adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua\"\n  "
       "control: \"bell\\a here\"\n",
       "server:\n  host: localhost\n  port: 8080\n  paths:\n  - /api\n  - /v1\n  - '#x'\n  - '- "
       "y'\n  - 'a: b'\n  motd: 'Line one\n\n    Line two\n\n    '\n  banner: '  padded  '\n  "
       "unicode: \346\227\245\346\234\254\350\252\236 caf\303\251\n  interp: "
       "${server.host}:${server.port}\n  long: lorem ipsum dolor sit amet consectetur adipiscing "
       "elit sed do eiusmod tempor\n    incididunt ut labore et dolore magna aliqua\n  control: "
       "\"bell\\a here\"\n"},
      {"list_of_maps:\n- name: a\n  value: 1\n- name: b\n  value:\n    deep:\n      deeper:\n      "
       "- 1\n      - - 2\n        - 3\n",
       "list_of_maps:\n- name: a\n  value: 1\n- name: b\n  value:\n    deep:\n      deeper:\n      "
       "- 1\n      - - 2\n        - 3\n"},
  };
  for (const TextCase& c : kCases) {
    INFO("document:\n" << c.input);
    auto doc = load_yaml_string(c.input, "doc.yaml");
    CHECK(to_yaml(doc.root) == c.expected);
  }
}

namespace {

// A document with every kind of value and many strings that need quoting.
Node rich_document() {
  auto doc = load_yaml_string(
      "model:\n"
      "  name: resnet\n"
      "  depth: 50\n"
      "  widths: [64, 128, 256]\n"
      "  dropout: 0.1\n"
      "  act: ${oc.select:act,relu}\n"
      "optim:\n"
      "  lr: 1.0e-05\n"
      "  huge: 1.0e+300\n"
      "  betas: [0.9, 0.999]\n"
      "  nesterov: false\n"
      "  sched: null\n"
      "  required: ???\n"
      "data:\n"
      "  - {path: /data/a, weight: .inf}\n"
      "  - - nested\n"
      "    - []\n"
      "    - {}\n"
      "1: int key\n"
      "2.5: float key\n"
      "true: bool key\n",
      "rich.yaml");
  Node& root = doc.root;
  const char* strings[] = {
      "yes",
      "no",
      "on",
      "y",
      "null",
      "~",
      "",
      " ",
      "0x10",
      "010",
      "12:30",
      "1e3",
      "1.0",
      "inf",
      "2020-01-01",
      "-",
      "- a",
      "? x",
      ": x",
      "a: b",
      "a #b",
      "#c",
      "&a",
      "*a",
      "!t",
      "|",
      ">",
      "'q",
      "\"q",
      "%p",
      "@a",
      "`b",
      "it's",
      "a\nb",
      "a\n",
      "\na",
      "a \nb",
      "a\n b",
      "tab\there",
      "caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac",
      "\xf0\x9f\x98\x80",
      "\xc2\xa0x",
      "bell\a",
      "esc\x1b",
      "---",
      "...",
      "<<",
      "=",
      "a b  c",
      " lead",
      "trail ",
      "long words that go past the eighty column limit and must be folded by the emitter so "
      "that they wrap onto continuation lines at the right indentation level",
      "a very long string with a newline\nin the middle of it and more words after the break so "
      "that folding and line breaks interact in the single quoted style",
      "\"double quoted\" and 'single' with a tab\there and enough length to be folded over the "
      "eighty character width limit",
  };
  Node list = Node::list();
  Node map = Node::map();
  int i = 0;
  for (const char* s : strings) {
    list.push_back(Node::string(s));
    map.set(s[0] == '\0' ? std::string("empty") : std::string(s), Node::string(s));
    map.set("k" + std::to_string(i++), Node::string(s));
  }
  root.set("strings", list);
  root.set("keys", map);
  return root;
}

}  // namespace

TEST_CASE("NEL, U+2028 and U+2029 are written as double-quoted escapes", "[yaml][writer]") {
  // A deliberate difference from OmegaConf.to_yaml, which writes these line breaks raw inside
  // single quotes: {'k': 'a\x85b'} gives "k: 'a\x85  b'\n", which PyYAML itself reads back as
  // 'a b', and which the loader refuses (U+2028/U+2029) or reads as a line break (NEL). Where
  // PyYAML already double-quotes (a space next to the break) the output is the same as its own.
  // {input, output, OmegaConf.to_yaml({input: 1})-style key output}
  struct Case {
    const char* input;
    const char* value;
    const char* key;
  };
  static const Case kCases[] = {
      {"a\xc2\x85"
       "b",
       "k: \"a\\Nb\"\n", "\? \"a\\Nb\"\n: 1\n"},
      {"\xc2\x85", "k: \"\\N\"\n", "\? \"\\N\"\n: 1\n"},
      {"a \xc2\x85"
       "b",
       "k: \"a \\Nb\"\n", "\? \"a \\Nb\"\n: 1\n"},                          // = OmegaConf
      {"n]0 \xc2\x85 :", "k: \"n]0 \\N :\"\n", "\? \"n]0 \\N :\"\n: 1\n"},  // = OmegaConf
      {"a\xe2\x80\xa8"
       "b",
       "k: \"a\\Lb\"\n", "\? \"a\\Lb\"\n: 1\n"},
      {"a\xe2\x80\xa9", "k: \"a\\P\"\n", "\? \"a\\P\"\n: 1\n"},
      {"a\xc2\xa0"
       "b",
       "k: a\xc2\xa0"
       "b\n",
       "a\xc2\xa0"
       "b: 1\n"},  // NBSP is no break: = OmegaConf
  };
  for (const Case& c : kCases) {
    INFO("input: [" << c.input << "]");
    Node value = map_of("k", Node::string(c.input));
    CHECK(to_yaml(value) == c.value);
    Node key = map_of(c.input, Node::integer(1));
    CHECK(to_yaml(key) == c.key);
    CHECK(load_yaml_string(to_yaml(value), "v.yaml").root == value);
    CHECK(load_yaml_string(to_yaml(key), "k.yaml").root == key);
  }
}

TEST_CASE("to_yaml output loads back to the same tree", "[yaml][writer]") {
  Node root = rich_document();
  std::string text = to_yaml(root);
  auto back = load_yaml_string(text, "roundtrip.yaml");
  // Element by element first, so a failure names the string that did not survive.
  const Node& strings = *root.find("strings");
  const Node& back_strings = *back.root.find("strings");
  REQUIRE(back_strings.size() == strings.size());
  for (size_t i = 0; i < strings.size(); ++i) {
    INFO("string: [" << strings.items()[i].as_string() << "]");
    CHECK(back_strings.items()[i] == strings.items()[i]);
  }
  const Node& keys = *root.find("keys");
  const Node& back_keys = *back.root.find("keys");
  REQUIRE(back_keys.entries().size() == keys.entries().size());
  for (size_t i = 0; i < keys.entries().size(); ++i) {
    INFO("key: [" << keys.entries()[i].key << "]");
    CHECK(back_keys.entries()[i].key == keys.entries()[i].key);
    CHECK(back_keys.entries()[i].value == keys.entries()[i].value);
  }
  CHECK(back.root == root);
  // Keys keep their types through the round trip.
  CHECK(back.root.entries()[3].key_type == NodeType::kInt);
  CHECK(back.root.entries()[4].key_type == NodeType::kFloat);
  CHECK(back.root.entries()[5].key_type == NodeType::kBool);
  CHECK(to_yaml(back.root) == text);
}

TEST_CASE("random strings survive to_yaml and back", "[yaml][writer]") {
  // Characters chosen to hit every quoting rule: indicators, spaces, breaks, quotes, digits,
  // escapes and multi-byte UTF-8, and the YAML 1.1 line breaks NEL, U+2028 and U+2029 (which the
  // writer, unlike PyYAML, escapes in double quotes).
  const std::string alphabet[] = {"a",
                                  "b",
                                  " ",
                                  " ",
                                  "\n",
                                  "-",
                                  "?",
                                  ":",
                                  "#",
                                  "'",
                                  "\"",
                                  "\\",
                                  "0",
                                  "1",
                                  ".",
                                  "e",
                                  "_",
                                  "x",
                                  "{",
                                  "}",
                                  "[",
                                  ",",
                                  "&",
                                  "*",
                                  "!",
                                  "|",
                                  ">",
                                  "%",
                                  "@",
                                  "`",
                                  "\t",
                                  "\xc3\xa9",
                                  "\xc2\xa0",
                                  "\xf0\x9f\x98\x80",
                                  "y",
                                  "n",
                                  "$",
                                  "~",
                                  "\xc2\x85",
                                  "\xe2\x80\xa8",
                                  "\xe2\x80\xa9",
                                  "\r"};
  uint64_t state = 12345;
  auto next = [&state]() {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<uint32_t>(state >> 33);
  };
  constexpr size_t kAlphabet = sizeof(alphabet) / sizeof(alphabet[0]);
  for (int round = 0; round < 3000; ++round) {
    std::string s;
    size_t len = next() % (round % 10 == 0 ? 120 : 12);
    for (size_t k = 0; k < len; ++k) s += alphabet[next() % kAlphabet];
    Node root = Node::map();
    root.set("v", Node::string(s));
    Node list = Node::list();
    list.push_back(Node::string(s));
    root.set("l", list);
    if (!s.empty()) root.set(s, Node::integer(1));
    std::string text = to_yaml(root);
    INFO("string: [" << s << "]\nyaml:\n" << text);
    Node back;
    try {
      back = load_yaml_string(text, "random.yaml").root;
    } catch (const std::exception& e) {
      FAIL("reload failed: " << e.what());
    }
    // A plain scalar that happens to read as null, a number, etc. would show up here.
    Node expected_v = s == "\?\?\?" ? Node::missing() : Node::string(s);
    REQUIRE(back.find("v") != nullptr);
    CHECK(*back.find("v") == expected_v);
    if (!s.empty() && s != "\?\?\?") CHECK(back.entries().size() == root.entries().size());
  }
}
