"""Why chains in the JSON report, written once: a table of facts and rules, chains that reference them.

A consultation's chains share most of their facts and whole sub-trees (every finding about an option re-derives that
option's memory; the workload profile sits under every option), so a report that spells out every step of every
chain repeats the same text thousands of times (1.27 MB for a student's QLoRA job). In the file:

- `why_rules` maps a rule id to its `title`, `heuristic`, `kind` (constraint, advice, derivation, ranking) and
  `source`, once;
- `why_facts` maps a fact id to what it says, `[kind, text, rule]`, or `[kind, text, rule, source]` when its source
  is not the rule's (rule null for answers and knowledge entries);
- a source several facts cite is an index into `why_sources`;
- a fact that says exactly what an earlier one says is that one's id (`"812": 477`);
- each chain (`why`, `profile_why`) is a list of steps `[depth, fact]`, `[depth, fact, "r"]` for a step marked
  `repeated`, or `[depth, fact, "s"]` for a fact whose whole sub-tree is the one given for it in an earlier chain
  (the chains are read in the order they appear in the file); a step that says something the tables cannot (the
  folded line of default answers) is written out as a `WhyStep` object;
- the options' `notes` (the same few methods under every option) are indexes into `option_notes`;
- a rule-out's `reason` is left out when it is the first step of its chain, word for word (as it is when the
  consultation wrote it).

`expand` turns such a document back into the `RecommendResult` shape (every step spelled out), so a report saved
before this format (steps as objects, no tables) reads the same. Each lifecycle phase is a consultation of its own,
with its own fact ids: its `phases[]` entry carries its own tables, and leaves out its `assumptions` when they are
the lifecycle's (they always are: one knowledge base).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

CHAIN_KEYS = frozenset({"why", "profile_why"})
FACTS, RULES, SOURCES, NOTES = "why_facts", "why_rules", "why_sources", "option_notes"
CUT = "why_cut"
"""Set when the rule-outs' chains were kept to their first levels to hold the file to its budget (jsonfmt.to_json):
`{"ruled_out": depth}`; `--full` writes every level."""
LIFECYCLE_SHARED = ("assumptions",)
"""A phase's sections left out when they say what the lifecycle's say (every phase reads the same assumptions)."""
RULE_FIELDS = (("rule_title", "title"), ("heuristic", "heuristic"), ("rule_kind", "kind"), ("source", "source"))
SHARED, REPEATED = "s", "r"

Step = dict[str, Any]
Signature = tuple[tuple[int, int, bool, str], ...]


def _chains(doc: Any) -> Iterator[tuple[dict[str, Any], str]]:
    """(container, key) of every chain in one consultation's document, in file order; lifecycle phases (their own
    consultations) excluded."""
    if isinstance(doc, dict):
        for key, value in doc.items():
            if key == "phases":
                continue
            if key in CHAIN_KEYS and isinstance(value, list):
                yield doc, key
            else:
                yield from _chains(value)
    elif isinstance(doc, list):
        for item in doc:
            yield from _chains(item)


def _subtree_end(steps: list[Step], i: int) -> int:
    end = i + 1
    while end < len(steps) and steps[end]["depth"] > steps[i]["depth"]:
        end += 1
    return end


def _signature(steps: list[Step], i: int, end: int) -> Signature:
    base = steps[i]["depth"]
    return tuple((s["depth"] - base, s["fact"], bool(s["repeated"]), str(s["text"])) for s in steps[i:end])


def _remember(steps: list[Step], trees: dict[int, Signature]) -> None:
    """Each fact's sub-tree as first given (what a later `"s"` step stands for)."""
    for i, step in enumerate(steps):
        if step["fact"] not in trees:
            trees[step["fact"]] = _signature(steps, i, _subtree_end(steps, i))


def compact(doc: dict[str, Any]) -> dict[str, Any]:
    """A `RecommendResult` dump (mode="json") with its chains written once (see the module docstring)."""
    rules: dict[str, dict[str, Any]] = {}
    facts: dict[str, dict[str, Any]] = {}
    trees: dict[int, Signature] = {}
    _said_by_the_chain(doc)
    for container, key in list(_chains(doc)):
        steps: list[Step] = container[key]
        out: list[Any] = []
        i = 0
        while i < len(steps):
            step = steps[i]
            end = _subtree_end(steps, i)
            fact = step["fact"]
            if end - i > 1 and trees.get(fact) == _signature(steps, i, end):
                out.append([step["depth"], fact, SHARED])
                i = end
                continue
            out.append(_step(step, facts, rules))
            i += 1
        _remember(steps, trees)
        container[key] = out
    for phase in doc.get("phases") or ():
        compact(phase)  # a phase is a consultation of its own: its own fact ids, its own tables
        for key in LIFECYCLE_SHARED:
            if key in doc and phase.get(key) == doc[key]:
                del phase[key]
    doc[RULES] = rules
    facts_out, doc[SOURCES] = _sources(_same_as(facts))
    doc[FACTS] = {key: _row(entry) for key, entry in facts_out.items()}
    _share_notes(doc)
    return doc


def _sources(facts: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """A source several facts cite (`units: rules/planning/units.py …` under every machine) as an index into
    `why_sources`."""
    counts: dict[str, int] = {}
    for entry in facts.values():
        if isinstance(entry, dict) and isinstance(entry.get("source"), str):
            counts[entry["source"]] = counts.get(entry["source"], 0) + 1
    index: dict[str, int] = {}
    for entry in facts.values():
        source = entry.get("source") if isinstance(entry, dict) else None
        if isinstance(source, str) and counts[source] > 1:
            entry["source"] = index.setdefault(source, len(index))
    return facts, list(index)


SAID = (("ruled_out", "reason"),)
"""A rule-out's reason is the words of the first fact of its chain: written there once (a hundred of them in a
student's report; a finding's message, read by every consumer, stays)."""


def _said_by_the_chain(doc: dict[str, Any]) -> None:
    """Leave out a rule-out's `reason` that its chain's first step says word for word."""
    for section, field in SAID:
        for entry in doc.get(section) or ():
            chain = entry.get("why") or []
            if chain and chain[0]["depth"] == 0 and chain[0]["text"] == entry.get(field):
                del entry[field]


def _said_again(doc: dict[str, Any]) -> None:
    """`_said_by_the_chain` undone: the field back from the (expanded) chain's first step."""
    for section, field in SAID:
        entries = doc.get(section)
        for entry in entries if isinstance(entries, list) else ():
            if not isinstance(entry, dict):
                continue
            chain = entry.get("why")
            if field not in entry and isinstance(chain, list) and chain and isinstance(chain[0], dict):
                entry[field] = chain[0].get("text")


def _row(entry: Any) -> Any:
    """A fact as `[kind, text, rule]` or `[kind, text, rule, source]` (rule null for answers and knowledge entries;
    the source only when it is not the rule's); a reference to an earlier fact stays its id."""
    if not isinstance(entry, dict):
        return entry
    row = [entry["kind"], entry["text"], entry.get("rule")]
    return [*row, entry["source"]] if "source" in entry else row


def _same_as(facts: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Facts that say exactly what an earlier one says (the same configuration found for two machine shapes) as the
    earlier one's id."""
    first: dict[str, int] = {}
    out: dict[str, Any] = {}
    for key, entry in facts.items():
        words = repr(sorted(entry.items()))
        if words in first:
            out[key] = first[words]
        else:
            first[words] = int(key)
            out[key] = entry
    return out


def _share_notes(doc: dict[str, Any]) -> None:
    """The options' `notes` (the same few methods under every option) as indexes into one `option_notes` list."""
    notes: dict[str, int] = {}
    for section in ("recommendations", "runners_up"):
        for option in doc.get(section) or ():
            option["notes"] = [notes.setdefault(n, len(notes)) for n in option.get("notes", ())]
    doc[NOTES] = list(notes)


def _step(step: Step, facts: dict[str, dict[str, Any]], rules: dict[str, dict[str, Any]]) -> Any:
    """One step as a reference (`[depth, fact]`), entering its fact and rule in the tables, or in full when it says
    something the tables do not (another title for the same rule, other words for the same fact)."""
    rule = step["rule"]
    if rule is None:
        if any(step[field] is not None for field, _ in RULE_FIELDS[:3]):
            return dict(step)
    else:
        entry = {name: step[field] for field, name in RULE_FIELDS}
        known = rules.setdefault(rule, entry)
        if any(known[name] != entry[name] for _, name in RULE_FIELDS[:3]):
            return dict(step)
    fact: dict[str, Any] = {"kind": step["kind"], "text": step["text"]}
    if rule is not None:
        fact["rule"] = rule
    if rule is None or step["source"] != rules[rule]["source"]:
        fact["source"] = step["source"]
    if facts.setdefault(str(step["fact"]), fact) != fact:
        return dict(step)
    return [step["depth"], step["fact"], REPEATED] if step["repeated"] else [step["depth"], step["fact"]]


class FormatError(ValueError):
    """A compact chain that does not resolve (a fact or a shared sub-tree the tables lack): names where."""


def expand(doc: Any) -> Any:
    """A JSON report document with every chain spelled out as `WhyStep` objects (documents without the tables are
    returned as they are)."""
    if not isinstance(doc, dict):
        return doc
    doc.pop(CUT, None)
    phases = doc.get("phases")
    for phase in phases if isinstance(phases, list) else ():
        for key in LIFECYCLE_SHARED:
            if isinstance(phase, dict) and key not in phase and key in doc:
                phase[key] = doc[key]
        expand(phase)
    if not {FACTS, RULES, SOURCES, NOTES} & set(doc):
        return doc
    facts, rules = doc.pop(FACTS, {}), doc.pop(RULES, {})
    sources, notes = doc.pop(SOURCES, []), doc.pop(NOTES, [])
    if not isinstance(facts, dict) or not isinstance(rules, dict) or not isinstance(notes, list) \
            or not isinstance(sources, list):
        raise FormatError(f"{FACTS} and {RULES} must be objects, {SOURCES} and {NOTES} lists")
    _expand_notes(doc, notes)
    trees: dict[int, list[Step]] = {}
    for container, key in list(_chains(doc)):
        steps: list[Step] = []
        for n, item in enumerate(container[key]):
            where = f"{key}[{n}]"
            if isinstance(item, dict):
                steps.append(item)
                continue
            if not isinstance(item, list) or len(item) not in (2, 3) or not all(isinstance(x, int) for x in item[:2]):
                raise FormatError(f"{where}: a step is [depth, fact], [depth, fact, \"r\"|\"s\"] or an object")
            depth, fact = item[0], item[1]
            mark = item[2] if len(item) == 3 else None
            if mark == SHARED:
                tree = trees.get(fact)
                if tree is None:
                    raise FormatError(f"{where}: fact {fact} has no earlier sub-tree to share")
                steps += [{**s, "depth": s["depth"] + depth} for s in tree]
                continue
            if mark not in (None, REPEATED):
                raise FormatError(f"{where}: unknown step mark {mark!r}")
            steps.append(_full(fact, depth, mark == REPEATED, facts, rules, sources, where))
        if all(isinstance(st, dict) and type(st.get("depth")) is int and type(st.get("fact")) is int
               for st in steps):  # else the result's validation names the bad step
            _remember_steps(steps, trees)
        container[key] = steps
    _said_again(doc)
    return doc


def _expand_notes(doc: dict[str, Any], notes: list[Any]) -> None:
    for section in ("recommendations", "runners_up"):
        for n, option in enumerate(doc.get(section) or ()):
            if not isinstance(option, dict) or not isinstance(option.get("notes"), list):
                continue
            try:
                option["notes"] = [notes[i] if isinstance(i, int) and not isinstance(i, bool) else i
                                   for i in option["notes"]]
            except IndexError:
                raise FormatError(f"{section}[{n}].notes: an index past the end of {NOTES}") from None


def _full(fact: int, depth: int, repeated: bool, facts: dict[str, Any], rules: dict[str, Any], sources: list[Any],
          where: str) -> Step:
    entry = facts.get(str(fact))
    if isinstance(entry, int) and not isinstance(entry, bool):  # says what an earlier fact says
        entry = facts.get(str(entry))
    if isinstance(entry, list) and len(entry) in (3, 4):
        entry = dict(zip(("kind", "text", "rule", "source"), entry, strict=False))
    if not isinstance(entry, dict):
        raise FormatError(f"{where}: fact {fact} is not in {FACTS} (or not [kind, text, rule(, source)])")
    rule = entry.get("rule")
    if rule is not None and not isinstance(rule, str):
        raise FormatError(f"{where}: fact {fact} names no rule id")
    info = rules.get(rule, {}) if rule is not None else {}
    if not isinstance(info, dict):
        raise FormatError(f"{where}: rule {rule!r} is not in {RULES}")
    step: Step = {"depth": depth, "fact": fact, "kind": entry.get("kind"), "text": entry.get("text"), "rule": rule}
    for field, name in RULE_FIELDS:
        step[field] = info.get(name)
    if "source" in entry:
        source = entry["source"]
        if isinstance(source, int) and not isinstance(source, bool):
            if not 0 <= source < len(sources):
                raise FormatError(f"{where}: fact {fact} cites source {source}, past the end of {SOURCES}")
            source = sources[source]
        step["source"] = source
    step["repeated"] = repeated
    return step


def _remember_steps(steps: list[Step], trees: dict[int, list[Step]]) -> None:
    """The decoder's copy of `_remember`: each fact's first sub-tree, depths relative to it."""
    for i, step in enumerate(steps):
        fact = step.get("fact")
        if isinstance(fact, int) and fact not in trees:
            end = _subtree_end(steps, i)
            base = step["depth"]
            trees[fact] = [{**s, "depth": s["depth"] - base} for s in steps[i:end]]
