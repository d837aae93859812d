"""Write pytest_specperf/sim/sglang_flags.py from the installed SGLang's launch parser.

    python tools/gen_sim_sglang_flags.py          # rewrite the table
    python tools/gen_sim_sglang_flags.py --check  # exit 1 when it differs from SGLang's

The simulator accepts every flag of this table (as SGLang does, ignoring what it does not
model) and refuses any other flag as SGLang's argparse does. The table is data only: the
simulator imports no SGLang code. ``tests/contract/test_sim_flags_contract.py`` holds it to
the pinned SGLang (``requirements/sglang-contract.txt``).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.support.sglang_contract import launch_flag_arities, sglang_version  # noqa: E402
from tools.generated_file import write_or_check  # noqa: E402

TABLE = REPO / "pytest_specperf" / "sim" / "sglang_flags.py"


def render(version: str, arities: dict[str, int | str]) -> str:
    # JSON spells strings as ruff format does: the written file needs no reformatting.
    rows = "".join(
        f"    {json.dumps(flag)}: {json.dumps(arity)},\n" for flag, arity in arities.items()
    )
    return (
        f'"""Every flag of SGLang {version}\'s launch parser and how many values it takes.\n'
        "\n"
        "0: a switch; 1: one value; '?', '*', '+': argparse's nargs. Written by\n"
        "tools/gen_sim_sglang_flags.py from SGLang's own parser and held to it by\n"
        "tests/contract/test_sim_flags_contract.py. Data only; no SGLang code.\n"
        '"""\n'
        "\n"
        f"SGLANG_VERSION = {json.dumps(version)}\n"
        "\n"
        "SGLANG_FLAGS: dict[str, int | str] = {\n"
        f"{rows}"
        "}\n"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the table is stale")
    args = parser.parse_args()
    text = render(sglang_version(), launch_flag_arities())
    return write_or_check(TABLE, text, check=args.check, generator="tools/gen_sim_sglang_flags.py")


if __name__ == "__main__":
    sys.exit(main())
