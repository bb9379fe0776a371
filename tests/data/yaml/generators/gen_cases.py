# How the expected outputs in tests/config/yaml_writer_test.cpp were produced: run with the
# hydra venv python (OmegaConf 2.3.1, PyYAML 6.0.3) and paste the printed rows into the tables.
# The tests never run this.
# Generates the expected-output table for tests/config/yaml_writer_test.cpp from real OmegaConf.
from omegaconf import OmegaConf
import json

def cpp(s):
    out = '"'
    for b in s.encode('utf-8'):
        c = chr(b)
        if c == '"': out += '\\"'
        elif c == '\\': out += '\\\\'
        elif c == '?': out += '\\?'
        elif c == '\n': out += '\\n'
        elif 32 <= b < 127: out += c
        else: out += '\\%03o' % b
    return out + '"'

values = [
    "", " ", "a", "abc", "hello world", "yes", "Yes", "YES", "no", "on", "On", "off", "OFF", "true", "True",
    "false", "y", "Y", "n", "N", "null", "Null", "NULL", "~", "0", "1", "-1", "+1", "010", "0x10", "0o10", "0b11",
    "08", "1_000", "0_", "12:30", "1:70", "1.0", "1.", ".5", "1e3", "1E3", "1e-4", "1.5e3", ".inf", "-.inf", ".nan",
    "inf", "-inf", "nan", "NaN", "Infinity", "infinity", "2020-01-01", "2020-1-1 10:00:00", "2001-12-14t21:59:43.10-05:00",
    "=", "<<", "!", "&", "*", "&a", "*a", "!tag", "-", "- a", "-a", "--", "---", "--- a", "...", "....", "?", "? a", "?a",
    ":", ": a", ":a", "a:b", "a: b", "a :b", "a:", "a #b", "a#b", "#a", ",a", "a,b", "[a", "a[0]", "]", "{a", "a}",
    "{}", "[]", "|", ">", "'a", "a'b", "\"a", "a\"b", "%a", "@a", "`a", "a@b", "${a.b}", "${oc.env:HOME}", "pre_${x}_post",
    "${a}:${b}", "\\", "a\\b", " a", "a ", " a ", "a  b", "a\nb", "a\n", "\na", "a\n\nb", "a \nb", "a\n b", "\n", "\t",
    "a\tb", "\x07", "\x1b", "\x7f", "\x85", "\xa0", "\xa0a", "a\xa01", "\xa01", "caf\xe9", "\u65e5\u672c\u8a9e",
    "\U0001F600", "a\U0001F600", "\ufeff", "\u2028", "a\u2029b", "\ud7ff", "\ue000", "\ufffd", "\ufffe",
    "\u0661\u0662", "\uff11", " 1", "1 ", " 1.5 ", "1\n", "1_0.5", "1__0", "_1", "1_", "0x_", "+.5", "-.5",
    "1.2.3", "1e", "e3", "1e+3", "-0", "00", "0.1_2", "190:20:30.15", "1:30.5", "???", "a???", "'", "''", "\"",
    "it's", "C:\\path\\to", "http://x.com/a?b=c#d", "a=b", "key=value,other", "x y z", "-1.5", "+", "++", "+a",
    ".", "..", ".a", "a.", "1a", "0xZZ", "yes!", "on ", " off", "TRUE ", "tRUE",
    "a " * 50, "word " * 30 + "end", "x" * 100, "x" * 90 + " y", ("abcdefghi " * 12).strip(),
    "a\n" + "b " * 60, "\"quoted\" " * 15, "it's " * 25, "tab\there " * 10, ("long " * 20) + "\n" + ("line " * 20),
    "a" * 79 + " b", "a" * 80 + " b", "a" * 81 + " b", "a " + "b" * 100 + " c", "x" * 75 + " y z w",
    " " + "w " * 50, "\x07" + "w " * 50, "w " * 45 + "\t",
]

keys = [
    "a", "yes", "y", "1", "1.5", "0x10", "null", "~", "", " ", "a b", "a: b", "-a", "- a", "?", "a\nb",
    "${x}", "k" * 122, "k" * 123, "k" * 127, "k" * 128, "w " * 70, "\t", "caf\xe9", "???", "it's",
    "1e3", "a" * 60 + " " + "b" * 70,
]

if __name__ == "__main__":
    print("// values: {input, OmegaConf.to_yaml({'k': input})}")
    for v in values:
        print("    {%s, %s}," % (cpp(v), cpp(OmegaConf.to_yaml({'k': v}))))
    print("// keys: {input, OmegaConf.to_yaml({input: 1})}")
    for k in keys:
        print("    {%s, %s}," % (cpp(k), cpp(OmegaConf.to_yaml({k: 1}))))
    print("// list items: {input, OmegaConf.to_yaml({'k': [input]})}")
    for v in values:
        print("    {%s, %s}," % (cpp(v), cpp(OmegaConf.to_yaml({'k': [v]}))))
