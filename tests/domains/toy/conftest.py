"""Install the toy domain the way pip installs a plugin: a distribution on sys.path whose entry point names it."""

from __future__ import annotations

from pathlib import Path

import pytest

HERE = Path(__file__).parent


@pytest.fixture
def install_plugin(tmp_path_factory, monkeypatch):
    """Installs a distribution with one `askchain.domains` entry point, for one test; returns its site folder."""

    def install(entry_point: str) -> Path:
        name = entry_point.split("=")[0].strip()
        site = tmp_path_factory.mktemp(f"site-{name}")
        dist = site / f"askchain_{name}-0.1.dist-info"
        dist.mkdir()
        (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: askchain-{name}\nVersion: 0.1\n")
        (dist / "entry_points.txt").write_text(f"[askchain.domains]\n{entry_point}\n")
        monkeypatch.syspath_prepend(str(site))
        return site

    monkeypatch.syspath_prepend(str(HERE))  # the plugins' code: askchain_toy
    return install


@pytest.fixture
def toy_site(install_plugin) -> Path:
    return install_plugin("toy = askchain_toy:ToyDomain")


@pytest.fixture
def toy(toy_site):
    """The toy domain, installed for one test."""
    from askchain.domain import get_domain

    return get_domain("toy")
