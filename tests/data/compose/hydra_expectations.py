"""Regenerates the expectation tables of tests/config/composer_test.cpp from REAL Hydra 1.3.2.

Run with the Python that has hydra-core 1.3.2 installed:
    python tests/data/compose/hydra_expectations.py > /tmp/tables.inc
and paste the output between the GENERATED markers of composer_test.cpp. Each case composes a
tree under tests/data/compose/ with Hydra's own config loader (the code path of `--cfg`), in RUN
mode unless the overrides start with "-m", and records the job config, the top-level key order,
hydra.runtime.choices, hydra.overrides, hydra.job.override_dirname, or the first line of the error.
Tests never run Python; this script only documents where the expected values came from.
"""
import os
import sys
import warnings

warnings.simplefilter("ignore")
from hydra import initialize_config_dir  # noqa: E402
from hydra.core.global_hydra import GlobalHydra  # noqa: E402
from hydra.types import RunMode  # noqa: E402
from omegaconf import DictConfig, ListConfig, OmegaConf  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

# (name, tree, config name ("" = none), overrides)
CASES = [
    ("basic defaults", "basic", "config", []),
    ("group change", "basic", "config", ["db=postgresql"]),
    ("nested group file", "basic", "config", ["server=nginx"]),
    ("nested group override", "basic", "config", ["server=nginx", "server/site=blog"]),
    ("append group", "basic", "config", ["+model=cnn"]),
    ("append group at package", "basic", "config", ["+db@backup=postgresql"]),
    ("delete group", "basic", "config", ["~db"]),
    ("delete group with value", "basic", "config", ["~db=mysql"]),
    ("delete group wrong value", "basic", "config", ["~db=postgresql"]),
    ("delete group not in list", "basic", "config", ["~model"]),
    ("missing option", "basic", "config", ["db=mysq"]),
    ("group not in defaults", "basic", "config", ["model=cnn"]),
    ("append existing group", "basic", "config", ["+db=postgresql"]),
    ("force add group", "basic", "config", ["++db=postgresql"]),
    ("global header", "basic", "config", ["db=sqlite"]),
    ("group options on command line", "basic", "config", ["db=[mysql,postgresql]"]),
    ("group null on command line", "basic", "config", ["db=null"]),
    ("value change", "basic", "config", ["app.lr=0.5", "app.name=other"]),
    ("value add", "basic", "config", ["+app.extra=1", "+new.deep.key=x"]),
    ("value add existing", "basic", "config", ["+app.lr=1"]),
    ("value force add", "basic", "config", ["++app.lr=1", "++brand_new=2"]),
    ("value change missing key", "basic", "config", ["app.lrr=1"]),
    ("value change missing parent", "basic", "config", ["nope.x=1"]),
    ("value delete", "basic", "config", ["~app.tags", "~db.timeout"]),
    ("value delete matching", "basic", "config", ["~app.lr=0.1"]),
    ("value delete mismatch", "basic", "config", ["~app.lr=0.2"]),
    ("value delete mismatch float", "basic", "config", ["~app.lr=1e15"]),
    ("value delete mismatch list", "basic", "config", ["~app.tags=[a,\"it's\"]"]),
    ("value delete mismatch dict", "basic", "config", ["~app={1: x}"]),
    ("value delete absent", "basic", "config", ["~app.nope"]),
    ("value empty string", "basic", "config", ["app.name="]),
    ("list index", "basic", "config", ["app.tags.0=z"]),
    ("list index out of range", "basic", "config", ["app.tags.5=z"]),
    ("list replaces", "basic", "config", ["app.tags=[c]"]),
    ("dict merges", "basic", "config", ["app={name: y}"]),
    ("dict merge new key fails", "basic", "config", ["app={newkey: y}"]),
    ("dict add merges new key", "basic", "config", ["+app={newkey: y}"]),
    ("scalar replaces dict", "basic", "config", ["db=5"]),
    ("ambiguous sweep", "basic", "config", ["app.lr=1,2"]),
    ("range needs multirun", "basic", "config", ["app.lr=range(1,3)"]),
    ("multirun skips sweeps", "basic", "config", ["-m", "app.lr=1,2", "db=mysql,postgresql"]),
    ("hydra overrides", "basic", "config", ["hydra.job.name=foo", "hydra/job_logging=disabled", "db=postgresql", "app.lr=2"]),
    ("override dirname exclude", "basic", "config", ["hydra.job.config.override_dirname.exclude_keys=[db]", "db=postgresql", "app.lr=1", "+x=y"]),
    ("override dirname kv sep", "basic", "config", ["hydra.job.config.override_dirname.kv_sep=_", "app.lr=1", "+b=c"]),
    ("group package override not a group", "basic", "config", ["nogroup@pkg=x"]),
    ("interpolated value override", "basic", "config", ["app.name=${db.driver}"]),
    ("missing primary", "basic", "nope", []),
    ("no primary config", "basic", "", ["+x=1", "+db=mysql"]),
    ("packages", "pkgs", "config", []),
    ("package group override", "pkgs", "config", ["db@src=sqlite"]),
    ("package delete", "pkgs", "config", ["~db@dst"]),
    ("package wrong key", "pkgs", "config", ["db=sqlite"]),
    ("nested package override", "pkgs", "config", ["nested/inner@nested.sub=i1"]),
    ("self first", "order", "self_first", []),
    ("self implicit last", "order", "no_self", []),
    ("no defaults append", "order", "no_defaults", ["+db=mysql"]),
    ("only override entries", "order", "only_override", []),
    ("duplicate self", "order", "dup_self", []),
    ("override before default", "order", "bad_override_order", []),
    ("override unknown group", "order", "override_unknown", []),
    ("overrides in primary", "order", "override_ok", []),
    ("command line beats primary override", "order", "override_ok", ["db=mysql"]),
    ("missing choice", "order", "missing_choice", []),
    ("missing choice multirun", "order", "missing_choice", ["-m"]),
    ("missing choice given", "order", "missing_choice", ["db=pg"]),
    ("null choice", "order", "null_choice", []),
    ("null choice set", "order", "null_choice", ["db=pg"]),
    ("options list", "order", "options", []),
    ("interpolated choice", "order", "interp", []),
    ("interpolated choice overridden", "order", "interp", ["db=pg", "server=nginx"]),
    ("interpolation unknown key", "order", "interp_bad", []),
    ("plain config names", "order", "plain", []),
    ("nested absolute groups", "order", "nested_override", []),
    ("nested override in group file", "order", "nested_override", ["stack=lemp"]),
    ("hydra node in primary", "order", "hydra_in_primary", ["hydra.run.dir=cli_dir"]),
    ("defaults not a list", "order", "not_a_list", []),
]

DEFAULTS_CASES = [
    ("basic", "config", []),
    ("basic", "config", ["server=nginx", "+model=cnn", "~db"]),
    ("pkgs", "config", []),
    ("order", "override_ok", []),
    ("order", "options", []),
    ("order", "plain", []),
    ("order", "nested_override", ["stack=lemp"]),
    ("order", "interp", []),
    ("order", "no_defaults", ["+db=mysql"]),
]


def canon(n):
    if isinstance(n, (DictConfig, ListConfig)):
        if n._is_missing():
            return "???"
        if n._is_none():
            return "null"
        if isinstance(n, DictConfig):
            return "{" + ", ".join(f"{k}: {canon(n._get_node(k))}" for k in n.keys()) + "}"
        return "[" + ", ".join(canon(n._get_node(i)) for i in range(len(n))) + "]"
    v = n._value()
    if v == "???":
        return "???"
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    return "'" + str(v) + "'"


def c_str(text):
    out = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return '"' + out.replace("???", "\\?\\?\\?") + '"'


def loader(tree):
    GlobalHydra.instance().clear()
    ctx = initialize_config_dir(config_dir=os.path.join(HERE, tree), version_base=None, job_name="app")
    ctx.__enter__()
    return GlobalHydra.instance().config_loader()


def run_case(name, tree, config, overrides):
    mode = RunMode.RUN
    if overrides and overrides[0] == "-m":
        mode = RunMode.MULTIRUN
        overrides = overrides[1:]
    ld = loader(tree)
    fields = [c_str(name), c_str(tree), c_str(config), "{" + ", ".join(c_str(o) for o in overrides) + "}",
              "true" if mode == RunMode.MULTIRUN else "false"]
    try:
        cfg = ld.load_configuration(config or None, overrides, mode, from_shell=True)
    except Exception as e:  # the first line of Hydra's message
        fields += ['""'] * 6 + [c_str(str(e).split("\n")[0])]
        return "    {" + ", ".join(fields) + "},"
    h = cfg.hydra
    job = OmegaConf.masked_copy(cfg, [k for k in cfg.keys() if k != "hydra"])
    fields += [c_str(canon(job)), c_str(",".join(cfg.keys())), c_str(canon(h.runtime._get_node("choices"))),
               c_str(canon(h.overrides._get_node("task"))), c_str(canon(h.overrides._get_node("hydra"))),
               c_str(h.job._get_node("override_dirname")._value()), '""']
    return "    {" + ", ".join(fields) + "},"


def tree_lines(tree, indent=0):
    from hydra.core.default_element import DefaultsTreeNode, GroupDefault, VirtualRoot

    def label(node):
        if isinstance(node, VirtualRoot):
            return node.get_config_path()
        if isinstance(node, GroupDefault):
            return node.get_override_key() + ": " + (node.get_name() or "null")
        return node.get_config_path()

    pad = "  " * indent
    if isinstance(tree, DefaultsTreeNode):
        if tree.children:
            out = [pad + label(tree.node) + ":"]
            for child in tree.children:
                out += tree_lines(child, indent + 1)
            return out
        return [pad + label(tree.node)]
    return [pad + label(tree)]


def run_defaults_case(tree, config, overrides):
    ld = loader(tree)
    dl = ld.compute_defaults_list(config, overrides, RunMode.RUN)
    rows = [f"{r.config_path}|{r.package}|{r.parent or ''}|{'self' if r.is_self else ''}" for r in dl.defaults]
    text = "\n".join(tree_lines(dl.defaults_tree)) + "\n"
    return ("    {" + ", ".join([c_str(tree), c_str(config), "{" + ", ".join(c_str(o) for o in overrides) + "}",
                                c_str("\n".join(rows) + "\n"), c_str(text)]) + "},")


if __name__ == "__main__":
    print("// clang-format off")
    print("const ComposeCase kComposeCases[] = {")
    for case in CASES:
        print(run_case(*case))
    print("};")
    print("const DefaultsCase kDefaultsCases[] = {")
    for case in DEFAULTS_CASES:
        print(run_defaults_case(*case))
    print("};")
    print("// clang-format on")
