"""The front door: what the tool does, start a consultation, reopen saved answers or a recent consultation.

Kept free of heavy imports (no pydantic, no engine): it is the first screen, and start-up time is measured.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Button, Footer, Header, Label, OptionList, Static
from textual.widgets.option_list import Option

from gpuadvisor.tui import settings
from gpuadvisor.tui.draft import load_draft
from gpuadvisor.tui.messages import AnswersLoaded, CatalogReloadRequested, WarmUpRequested
from gpuadvisor.tui.state.advisor_state import AdvisorScreenMixin

if TYPE_CHECKING:
    pass

INTRO = """\
Describe your model and workload — training, fine-tuning or serving — and get ranked hardware options, rented \
or bought, with memory, speed and cost, and the reasons behind every number."""
STEPS = """\
 1  Answer: workload, model, precision, targets, budget, deployment
 2  See the ranked options, the warnings and what was ruled out
 3  Explore: the WHY of an option, compare, what-if; save a report"""


class WelcomeScreen(AdvisorScreenMixin, Screen[None]):
    """Start a new consultation, open saved answers or reopen a recent one."""

    AUTO_FOCUS = "#new"
    """Focused as the screen is composed: Textual's default ("*") focused the scrolling container first and on_mount
    then moved focus to New, and each focus change recomposes the footer before the first paint."""
    BINDINGS = [
        Binding("n", "app.new_consultation", "New", id="welcome.new", tooltip="Start a new consultation"),
        Binding("o", "app.open_answers", "Open", id="welcome.open", tooltip="Open saved answers or a JSON report"),
        Binding("u", "resume", "Resume", id="welcome.resume",
                tooltip="Resume the answers you have not run yet (kept as a draft)"),
        Binding("r", "refresh_prices", "Refresh prices", id="welcome.refresh",
                tooltip="Fetch current cloud prices from gpuhunt's public catalogs (gpuadvisor kb refresh)"),
        Binding("q", "app.quit", "Quit", id="welcome.quit", tooltip="Leave gpuadvisor"),
        Binding("ctrl+t", "app.toggle_theme", "Theme", id="welcome.theme",
                tooltip="Switch between the light and the dark theme"),
    ]
    HELP = """\
## Welcome

gpuadvisor asks about your model and workload, then ranks hardware options with their memory, speed and cost,
and explains each result down to the source documents.

- **n** starts a new consultation, **o** opens saved answers (a TOML answers file or a JSON report).
- **Enter** on a recent consultation reopens it straight at the results.
- **u** resumes answers you have not run yet: every entry is kept as a draft (left with Back from the first
  question, or by a crash or a kill) until its consultation runs or is discarded; the button shows only when there is
  such a draft, with what it holds. **n** with a draft waiting asks first: resume it, or start blank.
- **r** fetches current on-demand and spot cloud prices from gpuhunt's public catalogs (as `gpuadvisor kb refresh`
  does); the line under the knowledge base says how old the prices in use are.
- **Ctrl+P** opens the command palette, **Ctrl+T** switches light/dark, **Ctrl+Q** quits.
"""


    def compose(self) -> ComposeResult:
        yield Header()
        with VerticalScroll(id="welcome"):
            yield Static("Which GPUs should you buy or rent?", id="welcome-title")
            yield Static(INTRO, id="welcome-intro")
            yield Static(STEPS, id="welcome-steps")
            with Horizontal(id="welcome-actions"):
                yield Button("New consultation (n)", id="new", variant="primary", compact=True)
                yield Button("Open saved answers (o)", id="open", compact=True)
                yield Button("Resume (u)", id="resume", compact=True)
            # what the draft holds, under the buttons where it wraps by words (in the button's label it was cut
            # at 80 columns: 'Resume (u): fine-tuning ·')
            yield Static("", id="draft-status", markup=False)
            yield Label("Recent consultations", id="recent-title")
            yield OptionList(id="recent", markup=False)  # titles and paths are data: text, never markup
            yield Static("", id="recent-empty")
            yield Static("Knowledge base: loading…", id="kb-status", markup=False)
            yield Static("", id="price-status")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.draft_changed()
        self.recent_changed()
        self.catalog_ready()
        self.query_one("#new", Button).focus()
        # Background work starts once the welcome screen has been on screen a moment: the first paint must not share
        # the interpreter with CSS parsing or the knowledge-base loader's thread.
        self.set_timer(0.3, lambda: self.app.post_message(WarmUpRequested()))

    _has_draft = False

    def draft_changed(self) -> None:
        """Offer the questionnaire's draft back (answers not yet run: left from the first question, or a crash or a
        kill), saying what it holds; at once, not only after a restart."""
        from gpuadvisor.tui.draft import draft_summary

        raw = load_draft()
        had_draft, self._has_draft = self._has_draft, raw is not None
        self.query_one("#resume", Button).display = raw is not None
        status = self.query_one("#draft-status", Static)
        status.display = raw is not None
        if raw is not None:
            status.update(f"Not run yet, kept as a draft: {draft_summary(raw)} (u resumes it).")
        if self._has_draft != had_draft:
            # the footer's Resume entry comes or goes (check_action); each refresh recomposes the footer, and at
            # start-up this ran twice (on_mount, on_screen_resume) before the first paint for no change
            self.refresh_bindings()

    def on_screen_resume(self) -> None:
        self.draft_changed()

    async def action_resume(self) -> None:
        await self.run_action("app.resume_draft")

    def recent_changed(self) -> None:
        """Refill the recent list from the data directory."""
        recent = settings.load_recent()
        option_list = self.query_one("#recent", OptionList)
        option_list.clear_options()
        home = str(Path.home())
        seen: set[str] = set()
        for entry in recent:
            shown = entry.path.replace(home, "~", 1) if entry.path.startswith(home) else entry.path
            # served: this session's own consultations, kept in its own folder on the server: the path says nothing
            text = entry.title if self.advisor.served is not None else f"{entry.title}\n  {shown}"
            option_list.add_option(Option(text, id=entry.path))
            seen.add(entry.path)
            for what_if in entry.what_ifs:  # under their consultation, one line each (an option id is unique)
                if what_if.path not in seen:
                    seen.add(what_if.path)
                    option_list.add_option(Option(f"  ↳ {what_if_line(what_if.title, entry.title)}",
                                                  id=what_if.path))
        option_list.display = bool(recent)
        self.query_one("#recent-empty", Static).update(
            "" if recent else "None yet: finished consultations are listed here.")

    def catalog_ready(self) -> None:
        status = self.query_one("#kb-status", Static)
        if self.advisor.catalog_error:
            status.update(f"✖ Knowledge base: {self.advisor.catalog_error}")
            status.add_class("-error")
        elif self.advisor.catalog is not None:
            status.update("✔ Knowledge base ready.")
            if not self._refreshing:
                self.query_one("#price-status", Static).update(
                    price_status(self.advisor.catalog, self.advisor.today, offer_refresh=self.advisor.served is None))

    # --- prices ----------------------------------------------------------------------------------------------------
    _refreshing = False

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """A visitor of the shared app is not offered the price refresh (the key and the footer's entry go): only
        whoever runs the server refreshes prices. Resume is offered while a draft waits."""
        if action == "refresh_prices" and self.advisor.served is not None:
            return False
        if action == "resume":
            return self._has_draft
        return True

    def action_refresh_prices(self) -> None:
        if self.advisor.served is not None:
            self.notify("In the shared app the prices are refreshed by whoever runs the server (gpuadvisor kb "
                        "refresh there).", title="Refresh prices", markup=False)
            return
        if self._refreshing:
            return
        self._refreshing = True
        self.query_one("#price-status", Static).update("Refreshing prices: downloading gpuhunt's catalogs…")
        self._refresh_prices()

    @work(thread=True, exclusive=True, exit_on_error=False, group="refresh", description="Refreshing prices")
    def _refresh_prices(self) -> None:
        from gpuadvisor.knowledge.errors import AdvisorError
        from gpuadvisor.tui.commands.kb_refresh import fetch_and_refresh

        lines: list[str] = []
        try:
            fetch_and_refresh(None, None, None, self._progress, out=lines.append)
        except AdvisorError as exc:
            self.app.call_from_thread(self._refreshed, [], str(exc))
            return
        self.app.call_from_thread(self._refreshed, lines, None)

    def _progress(self, label: str, done: int, total: int | None) -> None:
        share = f" {done / total:.0%}" if total else f" {done / 1e6:.1f} MB"
        self.app.call_from_thread(self.query_one("#price-status", Static).update,
                                  f"Refreshing prices: downloading the {label} catalog…{share}")

    def _refreshed(self, lines: list[str], error: str | None) -> None:
        self._refreshing = False
        if error is not None:
            self.notify(error, title="Prices not refreshed", severity="error", timeout=10, markup=False)
            self.catalog_ready()
            return
        self.notify("\n".join(lines[:2]), title="Prices refreshed", timeout=8, markup=False)
        self.app.post_message(CatalogReloadRequested())  # catalog_ready follows when the new prices are loaded

    @on(Button.Pressed, "#new")
    async def _new(self) -> None:
        await self.run_action("app.new_consultation")

    @on(Button.Pressed, "#resume")
    async def _resume(self) -> None:
        await self.run_action("app.resume_draft")

    @on(Button.Pressed, "#open")
    async def _open(self) -> None:
        await self.run_action("app.open_answers")

    @on(OptionList.OptionSelected, "#recent")
    def _reopen(self, event: OptionList.OptionSelected) -> None:
        from gpuadvisor.knowledge.errors import AdvisorError
        from gpuadvisor.tui.screens.open_answers import read_path

        if event.option.id:
            try:
                loaded = read_path(Path(event.option.id))
            except AdvisorError as exc:
                self.notify(str(exc), title="Cannot reopen", severity="error", markup=False)
                return
            self.app.post_message(AnswersLoaded(loaded))


def what_if_line(title: str, parent: str) -> str:
    """A what-if under its consultation says what differs: its change, or what its title adds to the parent's."""
    if " · what-if: " in title:
        return "what-if: " + title.split(" · what-if: ", 1)[1]
    mine, theirs = title.split(" · "), set(parent.split(" · "))
    return "edited: " + (" · ".join(p for p in mine if p not in theirs) or title)


def price_status(catalog: Any, today: Any = None, *, offer_refresh: bool = True) -> str:
    """How old the prices in use are, in one line: refreshed (when, from which catalogs) or shipped (their dates);
    `offer_refresh`: say which key refreshes them (never to a visitor of the shared app, who may not)."""
    from gpuadvisor.rules.pricing.price_age import today as price_today

    now = today or price_today()
    shipped = catalog.price_dates()
    span = f"{shipped.oldest:%Y-%m} to {shipped.newest:%Y-%m-%d}" if shipped else "undated"
    info = catalog.refresh
    if info is None or info.refreshed_on is None:
        return f"Prices in use: as shipped, dated {span}." + (" Press r to fetch current cloud prices." if offer_refresh
                                                              else "")
    days = max((now - info.refreshed_on).days, 0)
    age = "today" if days == 0 else f"{days} day{'s' if days != 1 else ''} ago"
    dates = sorted({c.as_of for c in info.catalogs if c.as_of})
    dated = f", catalogs dated {dates[0]}" + (f" to {dates[-1]}" if len(dates) > 1 else "") if dates else ""
    return (f"Prices in use: cloud prices refreshed {info.refreshed_on:%Y-%m-%d} ({age}{dated}), the rest as "
            f"shipped; all dated {span}." + (" Press r to refresh again." if offer_refresh else ""))
