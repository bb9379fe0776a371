"""Checks the OmegaConf tables of tests/config/yaml_writer_test.cpp against REAL OmegaConf.

    python tests/data/yaml/generators/check_tables.py   (the Python of scripts/hydra_goldens.sh)

gen_cases.py and gen_docs.py print rows {input, OmegaConf's output} that were pasted into the
test by hand, some of them kept apart as deliberate differences. This runs both generators and
checks every row they print, compared as the C++ values the literals spell (not as text, since
the test wraps long literals): the test has the same row, or its row for the same input is a
deliberate difference, marked by a comment naming OmegaConf on the row's lines. Exit status 1,
with the rows that changed, otherwise.
"""
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TEST = os.path.join(HERE, "..", "..", "..", "config", "yaml_writer_test.cpp")
TOKEN = re.compile(r'"(?:[^"\\\n]|\\.)*"|//[^\n]*|/\*.*?\*/|[{},]|[^\s{},"/]+|/', re.S)
ESCAPES = {"n": 10, "t": 9, "r": 13, "\\": 92, '"': 34, "'": 39, "?": 63, "a": 7, "b": 8, "f": 12, "v": 11, "0": 0}


def decode(literal):
    """The bytes a C string literal (without its quotes) spells."""
    out, i = bytearray(), 0
    body = literal.encode("utf-8")
    while i < len(body):
        c = body[i]
        if c != 92:
            out.append(c)
            i += 1
            continue
        e = chr(body[i + 1])
        if e in "01234567":
            m = re.match(rb"[0-7]{1,3}", body[i + 1:])
            out.append(int(m.group(0), 8) & 0xFF)
            i += 1 + len(m.group(0))
        elif e == "x":
            m = re.match(rb"[0-9a-fA-F]+", body[i + 2:])
            out.append(int(m.group(0), 16) & 0xFF)
            i += 2 + len(m.group(0))
        else:
            out.append(ESCAPES[e])
            i += 2
    return bytes(out)


def rows(text):
    """(fields, comment text on the row's lines) for every innermost {...} group."""
    found, stack = [], []
    for m in TOKEN.finditer(text):
        tok = m.group(0)
        if tok == "{":
            stack.append((m.start(), []))
        elif tok == "}" and stack:
            start, toks = stack.pop()
            if any(t == "{" for t in toks):
                continue
            fields, cur = [], []
            for t in toks + [","]:
                if t == ",":
                    if cur:
                        fields.append(b"".join(decode(x[1:-1]) if x.startswith('"') else x.encode() for x in cur))
                    cur = []
                elif not t.startswith("/"):
                    cur.append(t)
            line_start = text.rfind("\n", 0, start) + 1
            line_end = text.find("\n", m.end())
            found.append((tuple(fields), text[line_start:line_end]))
            if stack:
                stack[-1][1].append("{")
        elif stack:
            stack[-1][1].append(tok)
    return found


def main():
    test_rows = rows(open(TEST, encoding="utf-8").read())
    have = {fields for fields, _ in test_rows}
    deliberate = {fields[0] for fields, line in test_rows if fields and "OmegaConf" in line}
    bad = []
    for gen in ("gen_cases.py", "gen_docs.py"):
        out = subprocess.run([sys.executable, gen], cwd=HERE, check=True, capture_output=True, text=True).stdout
        for fields, _ in rows(out):
            if fields not in have and fields[0] not in deliberate:
                bad.append((gen, fields))
    for gen, fields in bad:
        print(f"{gen}: OmegaConf's row is not in yaml_writer_test.cpp: {fields!r}"[:600])
    print(f"yaml_writer_test.cpp: {len(bad)} rows differ from OmegaConf's", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
