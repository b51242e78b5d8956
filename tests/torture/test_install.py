"""A client that cannot start for want of a package is told what to install, in plain words."""

from __future__ import annotations

import sys

from streamcalls_lab.torture import CLIENT_PACKAGES, check_client, install_hint


def test_a_missing_sdk_names_the_package_and_the_clients_extra() -> None:
    hint = install_hint("ModuleNotFoundError: No module named 'httpx_sse'")
    assert "python -m pip install httpx-sse" in hint and '".[clients]"' in hint


def test_a_missing_module_of_no_known_client_names_only_itself() -> None:
    hint = install_hint("ModuleNotFoundError: No module named 'mylib.sub'")
    assert "python -m pip install mylib" in hint and "[clients]" not in hint


def test_another_reason_not_to_start_gives_no_install_hint() -> None:
    assert install_hint("exited 2 before any request reached the server") is None
    assert install_hint(None) is None


def test_every_client_package_is_in_the_clients_extra() -> None:
    import tomllib

    from ..conftest import REPO

    extra = tomllib.loads((REPO / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]["clients"]
    names = {r.split(">")[0].split("<")[0].split("=")[0].strip() for r in extra}
    assert set(CLIENT_PACKAGES.values()) <= names


def test_check_client_reports_what_to_install_when_the_sdk_is_missing(tmp_path) -> None:
    client = tmp_path / "needs_sdk.py"
    client.write_text("import not_installed_sdk_for_the_test\n")
    report = check_client([sys.executable, str(client)], ["openai-chat"], families=["escapes"],
                          progress=False)
    assert len(report) == 0 and report.attrs["not_started"]
    assert "python -m pip install not_installed_sdk_for_the_test" in report.attrs["install"]
