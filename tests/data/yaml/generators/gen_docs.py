# Expected floats, ints and whole documents for tests/config/yaml_writer_test.cpp (see gen_cases.py).
from omegaconf import OmegaConf
from gen_cases import cpp
import math
floats = [0.0, -0.0, 1.0, -1.0, 100.0, 1e-5, 1e-4, 0.0001234, 1e15, 1e16, 1.5e16, 1e20, 1e300, 5e-324, 0.1,
          0.30000000000000004, 1/3, 2.5e-7, 123456789.123, 1e22, 12345678901234567890.0, 3e-5, 6.02214076e23,
          float('inf'), float('-inf')]
print("// floats: {value, OmegaConf.to_yaml({'k': value})}")
for f in floats:
    lit = f.hex() if math.isfinite(f) else ("std::numeric_limits<double>::infinity()" if f > 0 else "-std::numeric_limits<double>::infinity()")
    print("    {%s, %s}," % (lit, cpp(OmegaConf.to_yaml({'k': f}))))
ints = [0, 1, -1, 42, 9223372036854775807, -9223372036854775808]
print("// ints")
for i in ints:
    print("    {%sLL, %s}," % (i if i > -9223372036854775808 else "-9223372036854775807LL - 1", cpp(OmegaConf.to_yaml({'k': i}))))
docs = [
"""deep:
  list:
  - name: a fairly long string value inside a map inside a list that must fold past eighty columns
    multi: "first line\\nsecond line with enough words to need folding past the eighty column limit\\n"
    dash: "- leading dash"
  - - nested list item that is long enough to be folded by the emitter at the width of eighty
      - "tab\\tand a long tail of words so that the double quoted style has to fold with escapes"
  ? a key that is very long but still simple because it is shorter than one hundred and twenty chars
  : value
  short: "  spaced  out  "
""",
"""model:
  name: resnet
  depth: 50
  layers: [1, 2, 3]
  dropout: 0.1
optim:
  lr: 1e-3
  betas: [0.9, 0.999]
  nesterov: true
  schedule: null
  tag: '???'
empty_map: {}
empty_list: []
""",
"""a:
- - 1
  - 2
- - x
  - []
  - {}
- b: 1
  c:
  - d: 2
    e: [3]
- null
- '???'
top: ${a}
""",
"""2: int key
true: bool key
1.5: float key
'3': string key
'yes': quoted
nested:
  0x10: hex key
""",
"""server:
  host: localhost
  port: 8080
  paths: ['/api', '/v1', '#x', '- y', 'a: b']
  motd: "Line one\\nLine two\\n"
  banner: "  padded  "
  unicode: "日本語 café"
  interp: "${server.host}:${server.port}"
  long: "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua"
  control: "bell\\a here"
""",
"""list_of_maps:
- name: a
  value: 1
- name: b
  value:
    deep:
      deeper:
      - 1
      - - 2
        - 3
""",
]
print("// documents: {yaml input, OmegaConf.to_yaml(OmegaConf.create(input))}")
for d in docs:
    print("    {%s,\n     %s}," % (cpp(d), cpp(OmegaConf.to_yaml(OmegaConf.create(d)))))
