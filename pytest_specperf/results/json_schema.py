"""The JSON Schema of results.json, generated from the msgspec structs that write it.

docs/results.schema.json is this module's output, checked in for readers and other tools; a
test keeps it equal to the structs. Regenerate it with
``python -m pytest_specperf.results.json_schema > docs/results.schema.json``.
"""

from __future__ import annotations

import inspect
import sys
from typing import Any

import msgspec

from pytest_specperf.results.schema import RunResults

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"


def results_schema() -> dict[str, Any]:
    schema: dict[str, Any] = _clean_descriptions(msgspec.json.schema(RunResults))
    return {"$schema": SCHEMA_DIALECT, "title": "pytest-specperf results.json", **schema}


def _clean_descriptions(node: Any) -> Any:
    """Descriptions with the docstrings' indentation removed.

    msgspec copies a struct's docstring as written; some releases dedent it first and some do
    not, so the schema is made the same under any of them.
    """
    if isinstance(node, dict):
        return {
            key: inspect.cleandoc(value)
            if key == "description" and isinstance(value, str)
            else _clean_descriptions(value)
            for key, value in node.items()
        }
    if isinstance(node, list):
        return [_clean_descriptions(item) for item in node]
    return node


def results_schema_text() -> str:
    return msgspec.json.format(msgspec.json.encode(results_schema()), indent=2).decode() + "\n"


def main() -> None:
    sys.stdout.write(results_schema_text())


if __name__ == "__main__":
    main()
