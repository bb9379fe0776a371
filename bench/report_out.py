"""The last step of the benchmark scripts that write one markdown report: print it, and write it
to --out when given."""
from typing import Optional


def emit(text: str, out: Optional[str]) -> None:
    print(text)
    if out:
        with open(out, "w") as f:
            f.write(text + "\n")
