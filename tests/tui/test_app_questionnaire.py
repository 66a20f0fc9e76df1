"""The questionnaire: Back/Next keep every entry, inline validation names the problem, skip logic, model lookup."""

from __future__ import annotations

import re
from pathlib import Path

from textual.pilot import Pilot
from textual.widgets import Button, Input, Static

from gpuadvisor.knowledge.catalog import Catalog
from gpuadvisor.tui.draft import load_draft
from gpuadvisor.tui.screens.choice import ChoiceScreen
from gpuadvisor.tui.screens.questionnaire import MODEL_REQUIRED, QuestionnaireScreen
from gpuadvisor.tui.screens.welcome import WelcomeScreen
from gpuadvisor.tui.widgets.question_field import QuestionField
from gpuadvisor.tui.widgets.review import ReviewTable

from .conftest import make_app, settle, wait_until

CONFIGS = Path(__file__).resolve().parents[1] / "data" / "configs"


def wizard(pilot: Pilot[None]) -> QuestionnaireScreen:
    screen = pilot.app.screen
    assert isinstance(screen, QuestionnaireScreen)
    return screen


def field(pilot: Pilot[None], key: str) -> QuestionField:
    return next(f for f in wizard(pilot).query(QuestionField) if f.question.key == key)


def shown_keys(pilot: Pilot[None]) -> list[str]:
    return [f.question.key for f in wizard(pilot).query(QuestionField)]


def error_text(pilot: Pilot[None], key: str) -> str:
    return str(field(pilot, key).query_one(".question-error", Static).render())


def input_value(pilot: Pilot[None], key: str) -> str:
    return field(pilot, key).query_one(Input).value


async def start(pilot: Pilot[None]) -> None:
    await settle(pilot)
    await pilot.press("n")
    await pilot.pause()


async def test_back_and_next_keep_every_entry(catalog: Catalog) -> None:
    app = make_app(catalog)
    async with app.run_test(size=(100, 30)) as pilot:
        await start(pilot)
        await pilot.press("ctrl+n", *"llama-3.1-8b", "ctrl+n")
        await pilot.press("tab", "tab", *"16384", "tab", *"4", "ctrl+n")
        assert wizard(pilot).step_id == "targets"
        await pilot.press(*"90")  # typed but not confirmed with Next
        await pilot.press("ctrl+b", "ctrl+b")
        assert wizard(pilot).step_id == "model"
        assert input_value(pilot, "model") == "llama-3.1-8b"
        await pilot.press("ctrl+n")
        assert input_value(pilot, "precision.context_tokens") == "16384"
        assert input_value(pilot, "precision.batch_size") == "4"
        await pilot.press("ctrl+n")
        assert input_value(pilot, "inference.requests_per_minute") == "90"
        # Leaving for the welcome screen keeps the entries too (Escape on the first step asks first: issue 42).
        for _ in range(4):
            await pilot.press("escape")
        assert isinstance(app.screen, ChoiceScreen)
        await pilot.press("k")
        assert isinstance(app.screen, WelcomeScreen)
        assert app.state.raw["precision.context_tokens"] == "16384"


async def test_back_from_the_first_question_offers_to_keep_or_discard(catalog: Catalog) -> None:
    """Issue 42: Ctrl+B on the first question left silently for the welcome screen, which offered no Resume until a
    restart, and `n` then started blank. Now leaving asks; the draft is offered back at once, with what it holds;
    `n` asks to resume it or start blank; discarding leaves nothing behind."""
    app = make_app(catalog)
    async with app.run_test(size=(100, 30)) as pilot:
        await start(pilot)
        await pilot.press("ctrl+n", *"llama-3.1-8b", "ctrl+n", "tab", "tab", *"16384")
        await pilot.press("ctrl+b", "ctrl+b", "ctrl+b")
        assert isinstance(app.screen, ChoiceScreen)
        await pilot.press("escape")  # keep editing: nothing lost, still on the first step
        assert wizard(pilot).step_id == "workload"
        await pilot.press("ctrl+b", "k")
        welcome = app.screen
        assert isinstance(welcome, WelcomeScreen)
        resume = welcome.query_one("#resume", Button)
        # 4 answers: the two typed, and the workload and stage Next chose; said under the buttons, where it wraps
        # (in the button's label it was cut at 80 columns)
        status = welcome.query_one("#draft-status", Static)
        assert resume.display and str(resume.label) == "Resume (u)" and status.display
        assert str(status.render()) == "Not run yet, kept as a draft: serving llama-3.1-8b · 4 answers (u resumes it)."
        resume_key = app.active_bindings["u"]  # in the footer, not hidden
        assert resume_key.enabled and resume_key.binding.show
        await pilot.press("n")  # a draft waits: ask
        assert isinstance(app.screen, ChoiceScreen)
        await pilot.press("u")
        await pilot.pause()
        assert wizard(pilot).step_id == "review"
        assert app.state.raw["precision.context_tokens"] == "16384" and app.state.raw["model"] == "llama-3.1-8b"
        await pilot.press("ctrl+b")  # review → deploy … → workload, then leave and discard
        while wizard(pilot).step_id != "workload":
            await pilot.press("ctrl+b")
        await pilot.press("ctrl+b", "d")
        await pilot.pause()
        assert isinstance(app.screen, WelcomeScreen)
        assert load_draft() is None and not app.screen.query_one("#resume", Button).display
        assert not app.screen.query_one("#draft-status", Static).display
        await pilot.press("n")  # nothing waits: a blank questionnaire at once
        await pilot.pause()
        assert wizard(pilot).step_id == "workload" and app.state.raw == {}


async def test_validation_error_is_named_and_blocks_next(catalog: Catalog) -> None:
    app = make_app(catalog)
    async with app.run_test(size=(100, 30)) as pilot:
        await start(pilot)
        await pilot.press("ctrl+n", *"llama-3.1-8b", "ctrl+n", "tab", "tab", *"lots")
        assert error_text(pilot, "precision.context_tokens") == (
            "✖ precision.context_tokens: Input should be a valid integer, unable to parse string as an integer")
        assert field(pilot, "precision.context_tokens").has_class("-invalid")
        await pilot.press("ctrl+n")
        assert wizard(pilot).step_id == "precision"  # blocked
        await pilot.press(*["backspace"] * 4, "0")
        # Answers: context_tokens has ge=1
        assert error_text(pilot, "precision.context_tokens") == (
            "✖ precision.context_tokens: Input should be greater than or equal to 1")
        await pilot.press("backspace", *"2,048")  # thousands separators are accepted
        assert error_text(pilot, "precision.context_tokens") == ""
        await pilot.press("ctrl+n")
        assert wizard(pilot).step_id == "targets"
        await pilot.press(*"-5")
        assert error_text(pilot, "inference.requests_per_minute") == (
            "✖ inference.requests_per_minute: Input should be greater than or equal to 0.001")


async def test_contradiction_between_answers_is_shown_on_the_step(catalog: Catalog) -> None:
    app = make_app(catalog)
    async with app.run_test(size=(100, 30)) as pilot:
        await start(pilot)
        await pilot.press("up", "enter", "tab", "tab", "down", "enter")  # fine-tune, QLoRA
        await pilot.press("ctrl+n", *"llama-3.1-8b", "ctrl+n")
        # Weights precision: open the list and pick FP32 (last entry) with the keyboard.
        await pilot.press("enter", "end", "enter")
        await pilot.pause()
        assert app.state.raw["precision.weights"] == "fp32"
        step_error = str(wizard(pilot).query_one("#step-error", Static).render())
        assert "QLoRA keeps the base weights in 4-bit" in step_error
        await pilot.press("ctrl+n")
        assert wizard(pilot).step_id == "precision"


async def test_model_is_required_and_looked_up(catalog: Catalog) -> None:
    app = make_app(catalog)
    async with app.run_test(size=(100, 30)) as pilot:
        await start(pilot)
        await pilot.press("ctrl+n", "ctrl+n")
        assert wizard(pilot).step_id == "model"
        assert error_text(pilot, "model") == f"✖ {MODEL_REQUIRED}"
        await pilot.press(*"gpt-17")
        assert error_text(pilot, "model").startswith("✖ unknown model 'gpt-17'")
        await pilot.press("ctrl+n")
        assert wizard(pilot).step_id == "model"
        for _ in range(6):
            await pilot.press("backspace")
        await pilot.press(*"llama 3.1")  # several models match: pick one from the list
        assert re.fullmatch(r"✖ 'llama 3\.1' matches \d+ models: pick one below", error_text(pilot, "model"))
        matches = field(pilot, "model").query_one("#model-matches")
        assert matches.display and matches.has_class("-shown")
        await pilot.press("down", "down", "enter")  # into the list, second match, pick it
        await pilot.pause()
        chosen = input_value(pilot, "model")
        model = catalog.models[chosen]
        assert error_text(pilot, "model") == ""
        info = str(field(pilot, "model").query_one("#model-info", Static).render())
        arch = model.architecture
        assert f"{arch.num_hidden_layers} layers" in info and f"{arch.kv_heads} KV heads" in info
        assert app.state.model_id == chosen


async def test_model_from_config_json_shows_its_shape(catalog: Catalog) -> None:
    app = make_app(catalog)
    async with app.run_test(size=(120, 30)) as pilot:
        await start(pilot)
        await pilot.press("ctrl+n", *str(CONFIGS / "llama-3.1-8b.json"))
        info = str(field(pilot, "model").query_one("#model-info", Static).render())
        # Llama 3.1 8B config.json: 32 layers, 8 KV heads; 8,030,261,248 parameters (Meta's model card: 8.03 B).
        assert "8.0 B parameters" in info and "32 layers" in info and "8 KV heads" in info
        await pilot.press("ctrl+n")
        assert wizard(pilot).step_id == "precision"
        answers, _ = app.state.validate()
        assert answers is not None and answers.model.config == str(CONFIGS / "llama-3.1-8b.json")


async def test_skip_logic_asks_only_what_applies(catalog: Catalog) -> None:
    app = make_app(catalog)
    async with app.run_test(size=(100, 30)) as pilot:
        await start(pilot)
        assert shown_keys(pilot) == ["workload", "stage"]  # the fine-tuning method only for fine-tuning
        await pilot.press("up", "enter")  # fine-tune
        assert shown_keys(pilot) == ["workload", "stage", "finetune.method", "finetune.lora_rank"]
        await pilot.press("tab", "tab", "up", "enter")  # method: LoRA → full: no adapter rank
        assert shown_keys(pilot) == ["workload", "stage", "finetune.method"]
        await pilot.press("ctrl+n", *"7", "ctrl+n")
        assert shown_keys(pilot) == ["precision.weights", "precision.context_tokens", "precision.batch_size"]
        await pilot.press("ctrl+n")
        assert shown_keys(pilot) == ["training.tokens_b", "training.deadline_days", "training.deadline_from",
                                     "training.global_batch",
                                     "training.optimizer", "training.checkpointing"]
        await pilot.press("ctrl+n")
        # a monthly budget applies to training too: a run's cost is spread over the months it takes
        assert shown_keys(pilot) == ["budget.capex_usd", "budget.hourly_usd", "budget.monthly_usd"]
        await pilot.press("ctrl+n")
        keys = shown_keys(pilot)
        assert "deployment.spot" in keys and "deployment.power_usd_per_kwh" in keys
        # what decides early comes first: the hardware you have (detected, typed or cpu) before where and providers
        assert keys[:3] == ["current.gpu", "current.gpu_count", "deployment.where"]
        assert keys.index("current.gpu") < keys.index("deployment.providers")
        await pilot.press("tab", "tab", "up", "enter")  # where: either → on premises (buy): no cloud questions
        keys = shown_keys(pilot)
        assert "deployment.spot" not in keys and "deployment.providers" not in keys
        assert "deployment.power_usd_per_kwh" in keys and "deployment.utilization" in keys
        await pilot.press("up", "enter")  # → rent in the cloud: no power price, no utilization
        keys = shown_keys(pilot)
        assert "deployment.spot" in keys and "deployment.providers" in keys
        assert "deployment.power_usd_per_kwh" not in keys and "deployment.utilization" not in keys


async def test_review_lists_answers_and_edits_a_step(catalog: Catalog) -> None:
    app = make_app(catalog)
    async with app.run_test(size=(100, 40)) as pilot:
        await start(pilot)
        await pilot.press("ctrl+n", *"llama-3.1-8b", "ctrl+n", "tab", "tab", *"8192")
        for _ in range(4):
            await pilot.press("ctrl+n")
        assert wizard(pilot).step.review
        table = wizard(pilot).query_one(ReviewTable)
        answers = {str(table.get_row(r.key)[1].plain): table.get_row(r.key)[2].plain for r in table.ordered_rows}
        assert answers["Context length"] == "8192 tokens"
        assert answers["Batch size"] == "1 sequence  (default)"  # issue 42: the count was "1 sequences"
        assert answers["Model"] == "llama-3.1-8b"
        table.move_cursor(row=[str(r.key.value) for r in table.ordered_rows].index("precision:precision.batch_size"))
        await pilot.press("enter")
        assert wizard(pilot).step_id == "precision"


async def test_review_wraps_a_long_answer_within_the_screen(catalog: Catalog) -> None:
    # a default's reason ran off a 100-column screen (the answer column was as wide as its longest cell)
    app = make_app(catalog)
    async with app.run_test(size=(100, 40)) as pilot:
        await start(pilot)
        await pilot.press("ctrl+n", *"qwen2.5 7b", "ctrl+n")
        for _ in range(4):
            await pilot.press("ctrl+n")
        assert wizard(pilot).step.review
        table = wizard(pilot).query_one(ReviewTable)
        await wait_until(pilot, lambda: bool(table.assumed))  # the prefetched consultation's assumed values
        widths = [c.get_render_width(table) for c in table.columns.values()]
        assert sum(widths) <= 100 - 2
        longest = max(table.ordered_rows, key=lambda r: len(table.get_row(r.key)[2].plain))
        assert len(table.get_row(longest.key)[2].plain) > widths[2] and longest.height > 1


async def test_a_quick_next_past_a_radio_question_does_not_crash(catalog: Catalog) -> None:
    # the radio's keyboard highlight is set after a refresh; a Next typed before it had removed the step's buttons
    # and RadioSet.pressed_index raised ValueError, ending the app
    from textual.widgets import RadioSet

    app = make_app(catalog)
    async with app.run_test(size=(100, 30)) as pilot:
        await start(pilot)
        radio_field = next(f for f in wizard(pilot).query(QuestionField) if f.question.kind == "radio")
        radio = radio_field.query_one(RadioSet)
        assert radio.pressed_button is not None
        await radio.remove_children()
        radio_field._highlight_pressed()  # what the pending callback then did
        await pilot.press("ctrl+n", *"llama-3.1-8b", "ctrl+n", "ctrl+n", *"600", "ctrl+n", "ctrl+n")
        assert wizard(pilot).step_id in {"budget", "deployment"}


def test_loaded_answers_are_kept_even_where_no_question_is_asked() -> None:
    """A file's answer the questionnaire would skip (a purchase budget while renting) or never asks (ECC) still
    reaches the consultation unchanged, so the TUI and `recommend --answers` agree."""
    from gpuadvisor.rules.inputs.answers import parse_answers
    from gpuadvisor.tui.questionnaire.answers_state import AnswerState, visible_questions

    given = {"workload": "inference", "model": {"name": "llama-3.1-8b"}, "budget": {"capex_usd": 50000.0},
             "deployment": {"where": "cloud"}, "constraints": {"ecc_required": True}}
    state = AnswerState.from_answers(parse_answers(given))
    assert "budget.capex_usd" not in [q.key for q in visible_questions(state.raw)]
    assert state.extra == {"budget.capex_usd": 50000.0, "constraints.ecc_required": True}
    answers, errors = state.validate()
    assert errors == {} and answers is not None and answers.given() == given
    # Switching to "either" asks the purchase budget again, pre-filled; clearing it then removes it.
    state.raw["deployment.where"] = "either"
    assert state.raw["budget.capex_usd"] == "50000"
    state.raw["budget.capex_usd"] = ""
    answers, _ = state.validate()
    assert answers is not None and answers.budget.capex_usd is None


async def test_an_answer_skipped_later_is_left_out(catalog: Catalog) -> None:
    """Typed a purchase budget, then chose to rent: the purchase budget no longer applies and is not sent."""
    app = make_app(catalog)
    async with app.run_test(size=(100, 30)) as pilot:
        await start(pilot)
        await pilot.press("ctrl+n", *"llama-3.1-8b", "ctrl+n", "ctrl+n", "ctrl+n")
        assert wizard(pilot).step_id == "budget"
        await pilot.press(*"50000", "ctrl+n")
        await pilot.press("tab", "tab", "up", "up", "enter")  # where: either → rent in the cloud
        answers, _ = app.state.validate()
        assert answers is not None and answers.budget.capex_usd is None
        assert app.state.raw["budget.capex_usd"] == "50000"  # kept, should the user switch back


async def test_qlora_shows_the_nf4_base_it_will_be_sized_with(catalog: Catalog) -> None:
    from textual.widgets import Select

    app = make_app(catalog)
    async with app.run_test(size=(100, 30)) as pilot:
        await start(pilot)
        await pilot.press("up", "enter", "tab", "tab", "down", "enter")  # fine-tune, QLoRA
        await pilot.press("ctrl+n", *"llama-3.1-8b", "ctrl+n")
        await pilot.pause()
        assert wizard(pilot).step_id == "precision"
        assert field(pilot, "precision.weights").query_one(Select).value == "nf4"
        assert "precision.weights" not in app.state.raw  # shown as the default, not recorded as an answer


def test_training_tokens_take_a_suffix_as_the_flag_does() -> None:
    """The tokens question is in billions; '500M' or '2T' typed there reads as `--tokens 500M` does, and a word is
    still named as wrong."""
    from gpuadvisor.rules.inputs.answers import parse_answers
    from gpuadvisor.tui.questionnaire.answers_state import AnswerState

    state = AnswerState.from_answers(parse_answers({"workload": "finetune", "model": {"name": "llama-3.1-8b"}}))
    for typed, billions in (("500M", 0.5), ("2T", 2000.0), ("0.02", 0.02), ("1,500M", 1.5), ("7e9", 7.0)):
        state.raw["training.tokens_b"] = typed
        answers, errors = state.validate()
        assert errors == {} and answers is not None and answers.training.tokens_b == billions, typed
    for wrong in ("lots", "0", "-5"):
        state.raw["training.tokens_b"] = wrong
        _, errors = state.validate()
        assert "training.tokens_b" in errors, wrong


async def test_a_fine_tune_reads_its_own_defaults_and_whole_questions_at_80_columns(catalog: Catalog) -> None:
    """The student (issue 42) at 80×24: the tokens' why-line said "Empty: 20 per parameter from scratch, 0.1
    fine-tuning." and the review "Global batch (sequences p…" = "4M-16M tokens from scratch, 64 fine-tuning": an
    empty entry now says what it means to a fine-tune, and a long question wraps in its cell instead of being cut."""
    app = make_app(catalog)
    async with app.run_test(size=(80, 24)) as pilot:
        await start(pilot)
        await pilot.press("up", "enter", "ctrl+n", *"llama-3.1-8b", "ctrl+n", "ctrl+n")
        assert wizard(pilot).step_id == "targets"
        tokens = next(f for f in wizard(pilot).query(QuestionField) if f.question.key == "training.tokens_b")
        why = str(tokens.query_one(".question-why", Static).render())
        assert why.endswith("Empty: 0.1 (fine-tuning).") and "from scratch" not in why
        for _ in range(3):  # budget, deployment, review
            await pilot.press("ctrl+n")
        assert wizard(pilot).step.review
        table = wizard(pilot).query_one(ReviewTable)
        answers = {str(table.get_row(r.key)[1].plain): table.get_row(r.key)[2].plain for r in table.ordered_rows}
        assert answers["Global batch (sequences per step)"] == "64 (fine-tuning)  (default)"
        assert not any(q.endswith("…") for q in answers)
