"""The app as `gpuadvisor serve` runs it for a visitor (served mode, tui/served.py), driven with Pilot: the issue-31
reproductions of a visitor writing, overwriting, listing and reading the server's files, each now a download to the
browser or a refusal that quotes nothing of the server's."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Input, Static, TextArea

from gpuadvisor.knowledge.catalog import Catalog
from gpuadvisor.rules.inputs.answers import parse_answers
from gpuadvisor.tui import served
from gpuadvisor.tui.app import GpuAdvisorApp
from gpuadvisor.tui.messages import ResultsRequested
from gpuadvisor.tui.report import render
from gpuadvisor.tui.screens.open_answers import OpenAnswersScreen, SharedFolderSuggester
from gpuadvisor.tui.screens.results import ResultsScreen

from .conftest import TODAY, make_app, open_save, settle, wait_until

GIVEN: dict[str, Any] = {"workload": "inference", "model": {"name": "llama-3.1-8b"}, "budget": {"hourly_usd": 20.0}}
SECRET = "S3CRET-7f3a9"


@pytest.fixture
def server(tmp_path: Path) -> Path:
    """A server's disk: a shared folder the operator named, and beside it files no visitor may touch (the session's
    own state is in tmp_path/data, the conftest's GPUADVISOR_DATA_DIR, as the server gives each session a folder)."""
    tmp_path = tmp_path / "disk"
    shared = tmp_path / "shared"
    shared.mkdir(parents=True)
    (shared / "serve-8b.toml").write_text('workload = "inference"\n[model]\nname = "llama-3.1-8b"\n',
                                          encoding="utf-8")
    outside = tmp_path / "outside"
    (outside / "sub").mkdir(parents=True)
    (outside / "private.toml").write_text(f'[model]\nname = "{SECRET}"\n', encoding="utf-8")
    (outside / "victim.conf").write_text("keep me\n", encoding="utf-8")
    (shared / "link.toml").symlink_to(outside / "private.toml")  # a link out of the shared folder
    return tmp_path


@pytest.fixture
def deliveries(monkeypatch: pytest.MonkeyPatch, server: Path) -> Iterator[list[dict[str, Any]]]:
    """Served mode with the shared folder; the browser's downloads recorded (Pilot's driver is not a browser)."""
    served.enable(served.Served(server / "shared"))
    got: list[dict[str, Any]] = []

    def deliver_text(self: GpuAdvisorApp, file: Any, **kwargs: Any) -> str:
        got.append({"text": file.read(), **kwargs})
        return "key"

    monkeypatch.setattr(GpuAdvisorApp, "is_web", property(lambda self: True))
    monkeypatch.setattr(GpuAdvisorApp, "deliver_text", deliver_text)
    yield got
    served.disable()


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
            and not p.is_symlink()}


@pytest.mark.parametrize(("typed", "name"), [("{outside}/sub/../evil.md", "evil.md"),
                                             ("{outside}/victim.conf", "victim.conf.md"),
                                             ("../../evil.md", "evil.md"), ("\x1b]52;c;aGk=\x07x.md", "52-c-aGk-x.md")])
async def test_a_visitor_saving_writes_nothing_on_the_server(catalog: Catalog, server: Path, typed: str, name: str,
                                                            deliveries: list[dict[str, Any]]) -> None:
    """Issue 31, 1: `…/outside/sub/../evil.md` wrote outside/evil.md, and an existing victim.conf was replaced after
    `y`. Served, the report goes to the browser under the last part of the name, and the disk is unchanged."""
    before = _files(server)
    cwd = set(os.listdir("."))
    app = make_app(catalog, parse_answers(GIVEN))
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_save(pilot)
        assert "sent to your browser" in str(screen.query_one(".dialog-text", Static).render())
        await pilot.press("tab")
        path = screen.query_one("#save-path", Input)
        path.value = typed.format(outside=server / "outside")
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert isinstance(app.screen, ResultsScreen)  # no confirmation asked: nothing is overwritten
        assert app.result is not None
        text = render(app.result, "md", today=TODAY)
    assert deliveries == [{"text": text, "save_filename": name, "mime_type": "text/markdown",
                           "open_method": "download", "encoding": "utf-8"}]
    assert _files(server) == before and set(os.listdir(".")) == cwd


async def test_the_open_dialog_lists_and_reads_only_the_shared_folder(catalog: Catalog, server: Path,
                                                                     deliveries: list[dict[str, Any]]) -> None:
    """Issue 31, 2: the dialog completed `…/outside/pri` to private.toml, and opening it showed `unknown model
    'S3CRET-7f3a9'`. Served, completion lists the shared folder only, and a path out of it is refused in words
    that quote nothing from the file."""
    shared = server / "shared"
    suggester = SharedFolderSuggester(shared)
    assert await suggester.get_suggestion("ser") == "serve-8b.toml"
    for typed in (f"{server}/outside/pri", "../outside/pri", "/etc/pass", "~/", "link"):
        assert await suggester.get_suggestion(typed) is None, typed  # the link leads out: not listed either
    app = make_app(catalog)
    async with app.run_test(size=(100, 34)) as pilot:
        await settle(pilot)
        await pilot.press("o")
        dialog = app.screen
        assert isinstance(dialog, OpenAnswersScreen)
        error = dialog.query_one("#open-error", Static)
        for typed, reason in [
            (f"{server}/outside/private.toml", "not a path on the server"),
            ("../outside/private.toml", "'..' and empty parts are not allowed"),
            ("sub/../../outside/private.toml", "'..' and empty parts are not allowed"),
            ("link.toml", "it leads out of the shared folder"),
            ("missing.toml", "no such answers file in the shared folder"),
            ("../outside/victim.conf", "'..' and empty parts are not allowed"),
        ]:
            dialog.query_one("#open-path", Input).value = typed
            await pilot.press("ctrl+o")
            await pilot.pause()
            shown = str(error.render())
            assert reason in shown and SECRET not in shown, (typed, shown)
        dialog.query_one("#open-path", Input).value = "serve-8b.toml"
        await pilot.press("ctrl+o")
        await wait_until(pilot, lambda: isinstance(app.screen, ResultsScreen) and app.result is not None)
        assert app.answers is not None and app.answers.model.name == "llama-3.1-8b"


async def test_pasted_answers_open_and_a_server_path_in_them_is_refused(catalog: Catalog,
                                                                        deliveries: list[dict[str, Any]]) -> None:
    app = make_app(catalog)
    async with app.run_test(size=(100, 34)) as pilot:
        await settle(pilot)
        await pilot.press("o")
        dialog = app.screen
        assert isinstance(dialog, OpenAnswersScreen)
        paste = dialog.query_one("#open-paste", TextArea)
        paste.text = f'[model]\nconfig = "/srv/models/{SECRET}/config.json"\n'
        await pilot.press("ctrl+o")
        await pilot.pause()
        shown = str(dialog.query_one("#open-error", Static).render())
        assert "model.config: the shared app reads no file on the server" in shown
        paste.text = '[current]\ngpu = "auto"\n'
        await pilot.press("ctrl+o")
        await pilot.pause()
        assert "would detect the server's GPUs, not yours" in str(dialog.query_one("#open-error", Static).render())
        paste.text = "[model\n"
        await pilot.press("ctrl+o")
        await pilot.pause()
        assert str(dialog.query_one("#open-error", Static).render()).startswith("✖ pasted answers:")
        paste.text = 'workload = "inference"\n[model]\nname = "llama-3.1-8b"\n'
        await pilot.press("ctrl+o")
        await wait_until(pilot, lambda: isinstance(app.screen, ResultsScreen) and app.result is not None)


async def test_the_model_field_reads_no_server_path(catalog: Catalog, server: Path,
                                                    deliveries: list[dict[str, Any]]) -> None:
    from gpuadvisor.tui.questionnaire.answers_state import model_answer
    from gpuadvisor.tui.questionnaire.model_lookup import lookup_model

    config = server / "outside" / "config.json"
    config.write_text('{"model_type": "' + SECRET + '"}', encoding="utf-8")
    assert model_answer(str(config)) == {"config": str(config)}  # never tested on disk, never read
    assert model_answer(str(server / "outside")) == {"config": str(server / "outside")}
    assert model_answer("Qwen/Qwen3-32B") == {"name": "Qwen/Qwen3-32B"}
    looked = lookup_model(str(config), catalog)
    assert looked.error is not None and "reads no file on the server" in looked.error and SECRET not in looked.error
    app = make_app(catalog)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        app.state.raw["model"] = str(config)
        answers, errors = app.state.validate()
        assert answers is not None and answers.model.config == str(config), errors
        app.post_message(ResultsRequested(answers))  # what Get results sends: refused in served mode
        await pilot.pause()
        assert app.result is None and not isinstance(app.screen, ResultsScreen)


async def test_prices_are_not_refreshed_and_no_gpu_is_detected_for_a_visitor(catalog: Catalog,
                                                                            deliveries: list[dict[str, Any]]) -> None:
    app = GpuAdvisorApp(catalog_fn=lambda: catalog, today=TODAY, theme="textual-dark")  # the real detection seam
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        assert app.detection is not None and not app.detection.found
        assert "this machine is the server" in app.detection.tried[0]
        # issue 41: not offered at all (the welcome's "Press r" and the footer's entry), so never refused either
        assert "Press r" not in str(app.screen.query_one("#price-status").render())
        assert "refresh_prices" not in {b.binding.action for b in app.screen.active_bindings.values()
                                        if b.binding.show and b.enabled}
        await pilot.press("r")
        await pilot.pause()
        assert not app.workers._workers or all(w.group != "refresh" for w in app.workers._workers)


async def test_a_session_outside_a_browser_writes_no_download(catalog: Catalog, server: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Textual's terminal driver would save a delivered file in the server's downloads folder: served mode refuses
    instead."""
    served.enable(served.Served(None))
    try:
        app = make_app(catalog, parse_answers(GIVEN))
        async with app.run_test(size=(100, 30)) as pilot:
            screen = await open_save(pilot)
            await pilot.press("ctrl+s")
            await pilot.pause()
            assert "downloads need the browser" in str(screen.query_one("#save-error", Static).render())
    finally:
        served.disable()
