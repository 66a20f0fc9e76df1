"""The WHY chain as a tree: each derived fact under what it explains, down to answers, knowledge entries and sources.

`WhyStep`s arrive flattened depth-first with a depth; this rebuilds the nesting. Each node also gets leaves naming
the rule that derived it (with its HEURISTICS id) and the source document, so the tree ends at the documents.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Static, Tree
from textual.widgets.tree import TreeNode

from gpuadvisor.rules.consultation.result import WhyStep

KIND_LABEL = {"answer": "your answer", "accelerator": "knowledge base", "model": "knowledge base",
              "instance": "knowledge base", "precision": "knowledge base", "assumption": "knowledge base"}


def step_label(step: WhyStep, above: bool = True) -> Text:
    """A tree line: what kind of fact (an answer is "your answer" only when you gave it, else "default"), its words,
    its heuristic; a repeated fact says where it is explained: `above` in this tree, else in the workload profile
    (the chains of findings and rule-outs mark the profile's facts repeated)."""
    kind = KIND_LABEL.get(step.kind, step.kind)
    if step.kind == "answer" and step.source != "your answer":
        kind = "default"
    label = Text.assemble((f"{kind}: ", "dim"), step.text)
    if step.heuristic:
        label.append(f"  [{step.heuristic}]", style="bold")
    if step.repeated:
        label.append("  (explained above)" if above else "  (from the workload profile)", style="dim italic")
    return label


class WhyTree(Tree[WhyStep | None]):
    """Expandable explanation; `x` expands everything, `z` collapses to the first level."""

    BINDINGS = [
        Binding("x", "expand_all", "Expand all", id="why.expand", tooltip="Open every level of the explanation"),
        Binding("z", "collapse_all", "Collapse", id="why.collapse", tooltip="Show only the first level"),
    ]

    def __init__(self, title: str, steps: Sequence[WhyStep], *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(title, id=id)
        self._steps = list(steps)
        self.show_root = True
        self.guide_depth = 3

    def on_mount(self) -> None:
        self.root.expand()
        stack: list[tuple[int, TreeNode[WhyStep | None]]] = [(-1, self.root)]
        seen: set[int] = set()
        for step in self._steps:
            while stack[-1][0] >= step.depth:
                stack.pop()
            parent = stack[-1][1]
            node = parent.add(step_label(step, step.fact in seen), data=step, expand=step.depth < 1)
            seen.add(step.fact)
            if step.rule and not step.repeated:
                title = step.rule_title or step.rule
                kind = f", {step.rule_kind}" if step.rule_kind in ("constraint", "advice") else ""
                node.add_leaf(Text.assemble(("rule: ", "dim"), title, (f"  ({step.rule}{kind})", "dim")), data=None)
            if step.source and not step.repeated:
                node.add_leaf(Text.assemble(("source: ", "dim"), step.source), data=None)
            stack.append((step.depth, node))
        if not self._steps:
            self.root.add_leaf(Text("No explanation was recorded for this entry.", style="dim"))

    def action_expand_all(self) -> None:
        self.root.expand_all()

    def action_collapse_all(self) -> None:
        for child in self.root.children:
            child.collapse_all()


def step_detail(step: WhyStep | None, fallback: str = "") -> Text:
    """The whole of a chain line, wrapped by the widget that shows it: the tree cuts its lines at the width."""
    if step is None:
        return Text(fallback, style="dim")
    text = step_label(step)
    if step.rule_title or step.rule:
        text.append(f"\nrule: {step.rule_title or step.rule}", style="dim")
        if step.rule and step.rule_title:
            text.append(f" ({step.rule})", style="dim")
    if step.source:
        text.append(f"\nsource: {step.source}", style="dim")
    return text


class WhyView(Vertical):
    """A WHY tree with, under it, the highlighted line in full (wrapped): long chain lines are never lost."""

    def __init__(self, title: str, steps: Sequence[WhyStep], *, tree_id: str) -> None:
        super().__init__(classes="why-view")
        self._tree = WhyTree(title, steps, id=tree_id)

    def compose(self) -> ComposeResult:
        yield self._tree
        yield Static(step_detail(None, "Move to a line to read it whole here."), classes="why-detail")

    @on(Tree.NodeHighlighted)
    def _highlighted(self, event: Tree.NodeHighlighted[WhyStep | None]) -> None:
        node = event.node
        step = node.data if node.data is not None else (node.parent.data if node.parent is not None else None)
        self.query_one(".why-detail", Static).update(step_detail(step, str(node.label)))
