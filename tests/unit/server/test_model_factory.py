"""pytest_specperf.server.model_factory: model folders generated locally."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_specperf.errors import ProfileError
from pytest_specperf.server.model_factory import FACTORIES, build_model
from pytest_specperf.server.profiles import builtin_profiles


@pytest.mark.parametrize("factory", sorted(FACTORIES))
def test_every_factory_writes_a_servable_folder(tmp_path: Path, factory: str) -> None:
    """Config, tokenizer and generation config are written; the config names its architecture."""
    folder = build_model(factory, tmp_path)
    config = json.loads((folder / "config.json").read_text())
    assert config["architectures"]
    assert (folder / "tokenizer.json").is_file()
    assert (folder / "generation_config.json").is_file()


def test_real_width_model_has_the_seed_family_shape() -> None:
    """Real width: hidden 2048, 48 layers, full attention every 4th, 10 of 256 experts, MTP."""
    config = FACTORIES["qwen3-next-real-width"]()
    assert (config["hidden_size"], config["num_hidden_layers"]) == (2048, 48)
    assert config["full_attention_interval"] == 4
    assert (config["num_experts"], config["num_experts_per_tok"]) == (256, 10)
    assert config["num_nextn_predict_layers"] == 1


def test_rebuilding_leaves_an_unchanged_folder_alone(tmp_path: Path) -> None:
    """A second build rewrites nothing (the folder is a cache shared by runs)."""
    folder = build_model("tiny-qwen3", tmp_path)
    before = {p.name: p.stat().st_mtime_ns for p in folder.iterdir()}
    build_model("tiny-qwen3", tmp_path)
    assert {p.name: p.stat().st_mtime_ns for p in folder.iterdir()} == before


def test_unknown_factory_names_the_known_ones(tmp_path: Path) -> None:
    """An unknown factory is a one-line profile error listing the known ones."""
    with pytest.raises(ProfileError, match="tiny-qwen3"):
        build_model("no-such-model", tmp_path)


@pytest.mark.parametrize("name", sorted(builtin_profiles()))
def test_every_profile_factory_exists(name: str) -> None:
    """A shipped profile that names a model factory names one that exists."""
    factory = builtin_profiles()[name].model_factory
    assert factory is None or factory in FACTORIES
