"""Rule packs: TOML compiled to engine JSON, every lint path, and the generic actions end to end."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from gpuadvisor.rules.engine import InputFact, PackError, RuleContext, RuleEngine, RuleError, Source
from gpuadvisor.rules.engine.actions import CONCLUSION_FIELDS
from gpuadvisor.rules.engine.packs import load_packs

SCHEMAS: dict[str, set[str]] = {
    "option": {"ref", "gpu", "interconnect", "tp", "mem_gb", "market", "price"},
    "answer": {"key", "value"},
    "gpu": {"ref", "name", "vendor", "mem_gb"},
    "model": {"name", "moe", "params_b"},
    "profile_flag": {"name", "value", "label", "tags"},
    "kv": {"gb"},
    **{k: set(v) for k, v in CONCLUSION_FIELDS.items()},
}


def _kv(ctx: RuleContext, model: Mapping[str, Any], ctxlen: Mapping[str, Any]) -> None:
    # 2 (K and V) x 1 GB per billion params per 1k tokens: synthetic arithmetic, the engine only carries it
    ctx.conclude({"kind": "kv", "gb": 2 * model["params_b"] * ctxlen["value"] / 1000})
    ctx.conclude(
        {
            "kind": "warning",
            "rule": ctx.rule.id,
            "heuristic": "",
            "category": "advice",
            "severity": "info",
            "message": ctx.render(),
            "target": "",
        }
    )


CALLBACKS = {"kv": _kv}


def write(tmp_path: Path, body: str, name: str = "p.toml", pack: str = "p") -> Path:
    path = tmp_path / name
    path.write_text(f'pack = "{pack}"\n' + body, encoding="utf-8")
    return path


def load(*paths: Path) -> list[Any]:
    return load_packs(list(paths), callbacks=CALLBACKS, fact_schemas=SCHEMAS)


def problems(tmp_path: Path, body: str) -> list[str]:
    with pytest.raises(PackError) as info:
        load(write(tmp_path, body))
    return [str(p).removeprefix(f"{tmp_path}/") for p in info.value.problems]


FULL = r"""description = "every action once"

[[rule]]
id = "WARN"
heuristic = "W3"
title = "Tensor parallel over PCIe"
explain = "Consumer cards talk over PCIe."
stratum = 3
source = { document = "doc-002", section = "Common Mistakes" }
[rule.when]
option = { kind = "option", interconnect = "pcie", tp = { gt = 1 }, gpu = "@g.name" }
g = { kind = "gpu", vendor = { not_in = ["amd"] } }
[rule.then]
action = "warn"
severity = "warning"
target = "option"
message = "{g.name}: TP={option.tp} over PCIe, {option.mem_gb:.1f} GB"
[[rule.example]]
expect = "fire"
answers = { tp = 2 }
[[rule.example]]
expect = "quiet"
answers = { tp = 1 }

[[rule]]
id = "ADVISE"
title = "Learning stage"
[rule.when]
stage = { kind = "answer", key = "stage", value = { in = ["learning", "prototyping"] } }
[rule.then]
action = "advise"
severity = "info"
message = "At stage {stage.value}, rent by the hour."

[[rule]]
id = "VETO"
title = "Too small"
stratum = 2
[rule.when]
need = { kind = "model", params_b = { gte = 30 } }
option = { kind = "option", mem_gb = { lt = 40 } }
[rule.then]
action = "rule_out"
target = "option"
message = "{option.gpu} has {option.mem_gb} GB, {need.name} needs more"

[[rule]]
id = "COST"
heuristic = "H10"
title = "Porting effort"
[rule.when]
option = { kind = "option", market = { ne = "consumer" }, price = { exists = true } }
[rule.then]
action = "add_cost"
target = "option"
part = "engineering"
usd = "{option.price}"
message = "price {option.price:.2f}"

[[rule]]
id = "DERIVE"
title = "MoE flag"
stratum = 0
[rule.when]
model = { kind = "model", moe = true }
[rule.then]
action = "derive"
fact = { kind = "profile_flag", name = "moe", value = "{model.moe}", label = "{model.name} is MoE", tags = ["a", 1] }

[[rule]]
id = "CALL"
title = "KV cache"
stratum = 1
[rule.when]
model = { kind = "model" }
ctxlen = { kind = "answer", key = "context_k" }
[rule.then]
action = "call"
call = "kv"
message = "KV for {model.name} at {ctxlen.value}k tokens"
"""

INPUTS = [
    InputFact(
        {
            "kind": "option",
            "ref": "o1",
            "gpu": "RTX4090",
            "interconnect": "pcie",
            "tp": 2,
            "mem_gb": 24,
            "market": "consumer",
        },
        "k",
    ),
    InputFact(
        {
            "kind": "option",
            "ref": "o2",
            "gpu": "H100",
            "interconnect": "nvlink",
            "tp": 8,
            "mem_gb": 80,
            "market": "datacenter",
            "price": 2.5,
        },
        "k",
    ),
    InputFact(
        {
            "kind": "option",
            "ref": "o3",
            "gpu": "MI50",
            "interconnect": "pcie",
            "tp": 2,
            "mem_gb": 16,
            "market": "datacenter",
        },
        "k",
    ),
    InputFact({"kind": "gpu", "ref": "g1", "name": "RTX4090", "vendor": "nvidia", "mem_gb": 24}, "k"),
    InputFact({"kind": "gpu", "ref": "g3", "name": "MI50", "vendor": "amd", "mem_gb": 16}, "k"),
    InputFact({"kind": "model", "name": "Mixtral", "moe": True, "params_b": 47}, "a"),
    InputFact({"kind": "answer", "key": "stage", "value": "learning"}, "a"),
    InputFact({"kind": "answer", "key": "context_k", "value": 8}, "a"),
]


def test_every_generic_action_end_to_end(tmp_path: Path) -> None:
    rules = load(write(tmp_path, FULL))
    cons = RuleEngine(rules).consult(INPUTS)
    conclusions = {kind: [f for _, f in cons.of_kind(kind)] for kind in ("warning", "veto", "cost_part")}
    assert sorted(conclusions["warning"], key=lambda f: f["rule"]) == [
        {
            "kind": "warning",
            "rule": "ADVISE",
            "heuristic": "",
            "category": "advice",
            "severity": "info",
            "message": "At stage learning, rent by the hour.",
            "target": "",
        },
        # from the call rule: rendered with ctx.render()
        {
            "kind": "warning",
            "rule": "CALL",
            "heuristic": "",
            "category": "advice",
            "severity": "info",
            "message": "KV for Mixtral at 8k tokens",
            "target": "",
        },
        # o1 only: o3 is PCIe with TP 2 too, but its GPU's vendor is amd (not_in), o2 is NVLink
        {
            "kind": "warning",
            "rule": "WARN",
            "heuristic": "W3",
            "category": "warning",
            "severity": "warning",
            "message": "RTX4090: TP=2 over PCIe, 24.0 GB",
            "target": "o1",
        },
    ]
    # 47B >= 30 and memory < 40 GB: o1 (24) and o3 (16), not o2 (80)
    assert sorted(conclusions["veto"], key=lambda f: f["target"]) == [
        {
            "kind": "veto",
            "rule": "VETO",
            "heuristic": "",
            "target": "o1",
            "reason": "RTX4090 has 24 GB, Mixtral needs more",
        },
        {
            "kind": "veto",
            "rule": "VETO",
            "heuristic": "",
            "target": "o3",
            "reason": "MI50 has 16 GB, Mixtral needs more",
        },
    ]
    # market != consumer and a price: o2 only (o3 has no price, o1 is consumer)
    assert conclusions["cost_part"] == [
        {
            "kind": "cost_part",
            "rule": "COST",
            "heuristic": "H10",
            "target": "o2",
            "part": "engineering",
            "usd": 2.5,
            "reason": "price 2.50",
        }
    ]
    assert [f for _, f in cons.of_kind("profile_flag")] == [
        {"kind": "profile_flag", "name": "moe", "value": True, "label": "Mixtral is MoE", "tags": ["a", 1]}
    ]
    # 2 x 47 x 8 / 1000 = 0.752 GB
    assert [f for _, f in cons.of_kind("kv")] == [{"kind": "kv", "gb": 0.752}]


def test_rules_carry_their_metadata_sorted_by_stratum_then_id(tmp_path: Path) -> None:
    path = write(tmp_path, FULL)
    rules = load(path)
    assert [(r.stratum, r.id) for r in rules] == [
        (0, "DERIVE"),
        (1, "CALL"),
        (2, "VETO"),
        (3, "WARN"),
        (10, "ADVISE"),
        (10, "COST"),
    ]
    warn = next(r for r in rules if r.id == "WARN")
    assert (warn.pack, warn.file, warn.line, warn.heuristic, warn.title) == (
        "p",
        str(path),
        4,
        "W3",
        "Tensor parallel over PCIe",
    )
    assert warn.explain == "Consumer cards talk over PCIe."
    assert warn.source == Source("doc-002", "Common Mistakes")
    assert (warn.action, warn.severity) == ("warn", "warning")
    assert warn.message == "{g.name}: TP={option.tp} over PCIe, {option.mem_gb:.1f} GB"
    assert [(e.expect, dict(e.data), e.line) for e in warn.examples] == [
        ("fire", {"answers": {"tp": 2}}, 19),
        ("quiet", {"answers": {"tp": 1}}, 22),
    ]
    # the join written on `option` refers to the later alias `g`, so it is compiled onto `g` (G: later refs ignored)
    assert list(warn.when) == [
        {"option": {"$and": [{"kind": "option"}, {"interconnect": "pcie"}, {"$gt": {"tp": 1}}]}},
        {"g": {"$and": [{"kind": "gpu"}, {"$neq": {"vendor": "amd"}}, {"name": {"option": "gpu"}}]}},
    ]
    call = next(r for r in rules if r.id == "CALL")
    assert call.then is _kv and call.action == "call" and call.source is None


OPS = r"""
[[rule]]
id = "OPS"
title = "operators"
[rule.when]
o = { kind = "option", {cond} }
[rule.then]
action = "rule_out"
target = "o"
message = "x"
"""


@pytest.mark.parametrize(
    ("cond", "vetoed"),
    [
        ('market = "consumer"', ["o1"]),
        ('market = { eq = "consumer" }', ["o1"]),
        ('market = { ne = "consumer" }', ["o2", "o3"]),
        ('market = { in = ["consumer", "cloud"] }', ["o1"]),
        ('market = { not_in = ["consumer", "cloud"] }', ["o2", "o3"]),
        ("price = { exists = true }", ["o2"]),
        ("price = { exists = false }", ["o1", "o3"]),
        ("price = { gt = 1 }", ["o2"]),  # absent price -> comparison false for o1, o3
        ("mem_gb = { gte = 24, lt = 80 }", ["o1"]),
        ("tp = { lte = 2 }", ["o1", "o3"]),
        ('gpu = "@@H100"', []),  # the literal string "@H100"
    ],
)
def test_condition_operators(tmp_path: Path, cond: str, vetoed: list[str]) -> None:
    rules = load(write(tmp_path, OPS.replace("{cond}", cond)))
    cons = RuleEngine(rules).consult(INPUTS)
    assert sorted(f["target"] for _, f in cons.of_kind("veto")) == vetoed


def test_join_with_an_earlier_alias(tmp_path: Path) -> None:
    body = (
        FULL.split("[[rule]]")[0]
        + r"""
[[rule]]
id = "J"
title = "join"
[rule.when]
g = { kind = "gpu" }
option = { kind = "option", gpu = { eq = "@g.name" } }
[rule.then]
action = "rule_out"
target = "option"
message = "{g.ref}"
"""
    )
    rules = load(write(tmp_path, body))
    assert list(rules[0].when)[1] == {"option": {"$and": [{"kind": "option"}, {"gpu": {"g": "name"}}]}}
    cons = RuleEngine(rules).consult(INPUTS)
    assert sorted((f["target"], f["reason"]) for _, f in cons.of_kind("veto")) == [("o1", "g1"), ("o3", "g3")]


MISSING = r"""
[[rule]]
id = "MISS"
title = "t"
[rule.when]
o = { kind = "option" }
[rule.then]
action = "warn"
severity = "info"
target = "o"
message = "{o.gpu} costs {o.price}"
"""


def test_missing_template_field_at_fire_time_is_a_rule_error(tmp_path: Path) -> None:
    engine = RuleEngine(load(write(tmp_path, MISSING)))
    with pytest.raises(RuleError) as info:
        engine.consult(INPUTS[:1])  # o1 has no price
    assert info.value.rule_id == "MISS"
    assert "template field o.price: the 'option' fact has no value for it" in str(info.value)


def test_missing_ref_at_fire_time_is_a_rule_error(tmp_path: Path) -> None:
    engine = RuleEngine(load(write(tmp_path, MISSING.replace(" costs {o.price}", ""))))
    with pytest.raises(RuleError, match="rule 'MISS' failed .*target o.ref: the 'option' fact has no `ref` field"):
        engine.consult([InputFact({"kind": "option", "gpu": "X"}, "k")])


BASE = r"""
[[rule]]
id = "P1"
title = "t"
[rule.when]
option = { kind = "option", tp = { gt = 1 } }
a = { kind = "answer", key = "stage" }
[rule.then]
action = "warn"
severity = "warning"
message = "{option.gpu}"
"""
# line numbers in BASE: 3 [[rule]], 4 id, 5 title, 6 [rule.when], 7 option, 8 a, 9 [rule.then], 10 action,
# 11 severity, 12 message


def mutate(old: str, new: str) -> str:
    assert old in BASE
    return BASE.replace(old, new)


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            mutate("tp = { gt", "tensor_paralel = { gt"),
            "p.toml:7: rule 'P1': when.option.tensor_paralel: unknown field of fact kind 'option'",
        ),
        (
            mutate('kind = "option"', 'kind = "opton"'),
            "p.toml:7: rule 'P1': when.option.kind: unknown fact kind 'opton'",
        ),
        (
            mutate('kind = "option", ', ""),
            "p.toml:7: rule 'P1': when.option: every pattern must test `kind` with a plain string (kind = \"...\")",
        ),
        (mutate('kind = "option"', 'kind = { in = ["option"] }'), "when.option: every pattern must test `kind`"),
        (
            mutate("gt = 1", "gtt = 1"),
            "p.toml:7: rule 'P1': when.option.tp.gtt: unknown operator "
            "(operators: eq, ne, gt, gte, lt, lte, in, not_in, exists)",
        ),
        (
            mutate("tp = { gt = 1 }", 'tp = { gt = "@a.value" }'),
            "p.toml:7: rule 'P1': when.option.tp.gt: a cross-fact reference is only allowed as an equality join (eq), "
            "not with 'gt': durable-rules 2.0.28 crashes on cross-fact comparisons (G14); compare in a `call` rule "
            "instead",
        ),
        (mutate("tp = { gt = 1 }", 'gpu = { ne = "@a.value" }'), "when.option.gpu.ne: a cross-fact reference is only"),
        (
            mutate("tp = { gt = 1 }", 'gpu = { in = ["@a.value"] }'),
            "when.option.gpu.in: a cross-fact reference is only",
        ),
        (mutate("tp = { gt = 1 }", 'gpu = "@nope.name"'), "when.option.gpu: '@nope.name': unknown alias 'nope'"),
        (
            mutate("tp = { gt = 1 }", 'gpu = "@a.vlue"'),
            "when.option.gpu: '@a.vlue': unknown field of fact kind 'answer'",
        ),
        (mutate("tp = { gt = 1 }", 'gpu = "@a"'), "'@a': a reference is written \"@alias.field\""),
        (mutate("tp = { gt = 1 }", 'gpu = "@option.market"'), "'@option.market': a pattern cannot join with itself"),
        (mutate("gt = 1", 'gt = "2"'), "when.option.tp.gt: gt compares numbers; got '2'"),
        (mutate("gt = 1", "gt = true"), "gt compares numbers; got True"),
        (mutate("gt = 1", "in = []"), "when.option.tp.in: needs a non-empty list of values"),
        (mutate("tp = { gt = 1 }", "tp = [1, 2]"), "when.option.tp: a list is not a value here; use in = [...]"),
        (mutate("gt = 1", "exists = 1"), "when.option.tp.exists: exists takes true or false"),
        (mutate("gt = 1", "gt = nan"), "when.option.tp.gt: nan is not a finite number"),
        (mutate("gt = 1", "gt = inf"), "when.option.tp.gt: inf is not a finite number"),
        (mutate("gt = 1", "eq = 9223372036854775808"), "outside the engine's 64-bit range"),
        (mutate("gt = 1", "eq = 1979-05-27"), "when.option.tp.eq: datetime.date(1979, 5, 27) is not a plain value"),
        (mutate("gt = 1", "in = [{ x = 1 }]"), "when.option.tp.in: {'x': 1} is not a plain value"),
        (mutate("tp = { gt = 1 }", "tp = {}"), "when.option.tp: an empty table is no condition"),
        (mutate("tp = { gt = 1 }", "id = 3"), "when.option.id: 'id' cannot be tested (reserved or not a plain"),
        (mutate("option = {", "class = {"), "p.toml:7: rule 'P1': when.class: alias 'class' is a reserved word"),
        (mutate("a = { kind", "option_2 = 3\nb = { kind"), "when.option_2: a pattern must be a table"),
        (
            mutate('action = "warn"', 'action = "shout"'),
            "p.toml:10: rule 'P1': then.action: must be one of warn, advise, rule_out, add_cost, derive, call, "
            "got 'shout'",
        ),
        (mutate('severity = "warning"\n', ""), "p.toml:9: rule 'P1': then.severity: required by action 'warn'"),
        (
            mutate('severity = "warning"', 'severity = "high"'),
            "p.toml:11: rule 'P1': then.severity: must be one of info, warning, critical, got 'high'",
        ),
        (
            mutate('severity = "warning"', 'severity = "warning"\nusd = 3'),
            "p.toml:12: rule 'P1': then.usd: not used by action 'warn'",
        ),
        (
            mutate('severity = "warning"', 'severity = "warning"\ncolour = "red"'),
            "p.toml:12: rule 'P1': then.colour: unknown key (allowed: action, severity, target, part, usd, message, "
            "fact, call)",
        ),
        (
            mutate('severity = "warning"', 'severity = "warning"\ntarget = "gpu"'),
            "then.target: unknown alias 'gpu' (aliases: option, a)",
        ),
        (
            mutate('severity = "warning"', 'severity = "warning"\ntarget = "a"'),
            "then.target: fact kind 'answer' of alias 'a' has no `ref` field",
        ),
        (
            mutate("{option.gpu}", "{gpu.name}"),
            "p.toml:12: rule 'P1': then.message: {gpu.name}: unknown alias 'gpu' (aliases: option, a)",
        ),
        (
            mutate("{option.gpu}", "{option.gpu:.1f} {option.nme}"),
            "then.message: {option.nme}: unknown field 'nme' of fact kind 'option'",
        ),
        (
            mutate("{option.gpu}", "{option}"),
            "then.message: placeholder {option}: only {alias.field} or {alias.field:format} is allowed",
        ),
        (mutate("{option.gpu}", "{option.gpu!r}"), "then.message: placeholder {option.gpu!r}: conversions are not"),
        (mutate('message = "{option.gpu}"', "message = 3"), "then.message: must be a string"),
        (
            mutate('action = "warn"\nseverity = "warning"', 'action = "rule_out"'),
            "then.target: required by action 'rule_out'",
        ),
        (
            mutate('action = "warn"\nseverity = "warning"',
                   'action = "add_cost"\ntarget = "option"\npart = "engineering"\nusd = "x"'),
            "then.usd: must be a number or exactly one {alias.field} (a field holding dollars)",
        ),
        (
            mutate('action = "warn"\nseverity = "warning"',
                   'action = "add_cost"\ntarget = "option"\npart = "engineering"\nusd = nan'),
            "then.usd: nan is not a finite number",
        ),
        (
            mutate('action = "warn"\nseverity = "warning"',
                   'action = "add_cost"\ntarget = "option"\npart = "goodwill"\nusd = 5'),
            "then.part: must be one of rental, hardware, network, power, site, resale, engineering, got 'goodwill'",
        ),
        (
            mutate('action = "warn"\nseverity = "warning"', 'action = "adjust_score"\ntarget = "option"\npoints = -5'),
            "then.action: adjust_score was removed: options are ranked by what they cost in dollars, not by points",
        ),
        (
            mutate('action = "warn"\nseverity = "warning"\nmessage = "{option.gpu}"', 'action = "derive"'),
            "then.fact: required by action 'derive'",
        ),
        (
            mutate(
                'action = "warn"\nseverity = "warning"\nmessage = "{option.gpu}"',
                'action = "derive"\nfact = { kind = "flag" }',
            ),
            "then.fact.kind: unknown fact kind 'flag'",
        ),
        (
            mutate(
                'action = "warn"\nseverity = "warning"\nmessage = "{option.gpu}"',
                'action = "derive"\nfact = { kind = "{option.gpu}" }',
            ),
            "then.fact.kind: required: a plain string (no template)",
        ),
        (
            mutate(
                'action = "warn"\nseverity = "warning"\nmessage = "{option.gpu}"',
                'action = "derive"\nfact = { kind = "profile_flag", nam = "x" }',
            ),
            "then.fact.nam: unknown field of fact kind 'profile_flag'",
        ),
        (
            mutate(
                'action = "warn"\nseverity = "warning"\nmessage = "{option.gpu}"',
                'action = "derive"\nfact = { kind = "profile_flag", id = "x" }',
            ),
            "then.fact.id: reserved or not a plain identifier",
        ),
        (
            mutate(
                'action = "warn"\nseverity = "warning"\nmessage = "{option.gpu}"',
                'action = "derive"\nfact = { kind = "profile_flag", name = "{option.nme}" }',
            ),
            "then.fact.name: {option.nme}: unknown field 'nme' of fact kind 'option'",
        ),
        (
            mutate(
                'action = "warn"\nseverity = "warning"\nmessage = "{option.gpu}"',
                'action = "derive"\nfact = { kind = "profile_flag", value = [1, nan] }',
            ),
            "then.fact.value.1: nan is not a finite number",
        ),
        (
            mutate('action = "warn"\nseverity = "warning"\nmessage = "{option.gpu}"', 'action = "call"\ncall = "nope"'),
            "p.toml:11: rule 'P1': then.call: no callback named 'nope' (known: kv)",
        ),
        (
            mutate('title = "t"', 'title = "t"\ncolour = "red"'),
            "p.toml:6: rule 'P1': colour: unknown key (allowed: id, heuristic, title, explain, stratum, source, when, "
            "then, example)",
        ),
        (mutate('title = "t"\n', ""), "p.toml:3: rule 'P1': title: required"),
        (mutate('title = "t"', 'title = " "'), "p.toml:5: rule 'P1': title: must be a non-empty string"),
        (mutate('title = "t"', 'title = "t"\nheuristic = 3'), "p.toml:6: rule 'P1': heuristic: must be a string"),
        (
            mutate('title = "t"', 'title = "t"\nstratum = 70000'),
            "p.toml:6: rule 'P1': stratum: must be an integer in 0..65535 (the engine priority), got 70000",
        ),
        (mutate('title = "t"', 'title = "t"\nstratum = -1'), "stratum: must be an integer in 0..65535"),
        (mutate('title = "t"', 'title = "t"\nstratum = true'), "stratum: must be an integer in 0..65535"),
        (
            mutate('id = "P1"', 'id = "P 1"'),
            "p.toml:4: rule 'P 1': id: required: a string matching [A-Za-z0-9][A-Za-z0-9_.:-]*",
        ),
        (mutate('id = "P1"\n', ""), "p.toml:3: rule '#1': id: required: a string matching [A-Za-z0-9][A-Za-z0-9_.:-]*"),
        (
            mutate('title = "t"', 'title = "t"\nsource = { section = "x" }'),
            "p.toml:6: rule 'P1': source.document: required: the document id",
        ),
        (
            mutate('title = "t"', 'title = "t"\nsource = { document = "d", page = 3 }'),
            "p.toml:6: rule 'P1': source.page: unknown key (allowed: document, section)",
        ),
        (mutate('title = "t"', 'title = "t"\nsource = "doc-002"'), "source: must be a table"),
        (
            BASE + '[[rule.example]]\nexpect = "maybe"\n',
            "p.toml:13: rule 'P1': example[0].expect: must be \"fire\" or \"quiet\", got 'maybe'",
        ),
        (
            mutate(
                '[rule.when]\noption = { kind = "option", tp = { gt = 1 } }\na = { kind = "answer", key = "stage" }\n',
                "",
            ),
            "p.toml:3: rule 'P1': when: required: [rule.when] with at least one alias = { kind = ... }",
        ),
        (mutate("[rule.then]", "[rule.thenx]"), "then: required: [rule.then] with an action"),
        (
            mutate("tp = { gt = 1 }", "tp = { gt = 1 }, mem_gb = { lt = 0 }") + "\n[meta]\nx = 1\n",
            "p.toml:14: meta: unknown top-level key (allowed: pack, description, rule)",
        ),
        ('rule = "x"\n', "p.toml:2: rule: rules are [[rule]] tables"),
        ("description = 3\n" + BASE, "p.toml:2: description: must be a string"),
        (
            mutate('title = "t"', 'title = "t"\nexample = 3'),
            "p.toml:6: rule 'P1': example: examples are [[rule.example]] tables",
        ),
        (
            mutate('title = "t"', 'title = "t"\nsource = { document = "d", section = 3 }'),
            "p.toml:6: rule 'P1': source.section: must be a string",
        ),
        (
            mutate('severity = "warning"', 'severity = "warning"\ntarget = 3'),
            "p.toml:12: rule 'P1': then.target: must be the name of an alias of [rule.when]",
        ),
        (
            mutate(
                '[rule.when]\noption = { kind = "option", tp = { gt = 1 } }\na = { kind = "answer", key = "stage" }\n',
                "when = 3\n",
            ),
            "p.toml:6: rule 'P1': when: must be a table of alias = { kind = ..., field = condition, ... }",
        ),
        (
            mutate('action = "warn"\nseverity = "warning"\nmessage = "{option.gpu}"', 'action = "derive"\nfact = 3'),
            "then.fact: must be a table",
        ),
        (
            mutate('action = "warn"\nseverity = "warning"\nmessage = "{option.gpu}"', 'action = "call"\ncall = 3'),
            "then.call: no callback named 3 (known: kv)",
        ),
        (
            mutate(
                'action = "warn"\nseverity = "warning"\nmessage = "{option.gpu}"',
                'action = "call"\ncall = "kv"\nmessage = "{option.nme}"',
            ),
            "then.message: {option.nme}: unknown field 'nme' of fact kind 'option'",
        ),
    ],
)
def test_lint_messages(tmp_path: Path, body: str, expected: str) -> None:
    found = problems(tmp_path, body)
    if expected.startswith("p.toml:"):  # the whole message, with its line
        assert expected in found
    else:
        assert any(expected in p for p in found), found


def test_every_problem_is_reported_at_once(tmp_path: Path) -> None:
    body = BASE.replace("tp = { gt", "tensor_paralel = { gt").replace('"warning"', '"high"') + BASE.replace(
        '"P1"', '"P2"'
    ).replace("{option.gpu}", "{option.nme}")
    found = problems(tmp_path, body)
    assert found == [
        "p.toml:7: rule 'P1': when.option.tensor_paralel: unknown field of fact kind 'option'",
        "p.toml:11: rule 'P1': then.severity: must be one of info, warning, critical, got 'high'",
        "p.toml:23: rule 'P2': then.message: {option.nme}: unknown field 'nme' of fact kind 'option'",
    ]


def test_lines_are_found_in_dotted_and_inline_tables(tmp_path: Path) -> None:
    body = r"""
[[rule]]
id = "D1"
title = "dotted"
when.option = { kind = "option", tensor_paralel = 2 }
then = { action = "warn", severity = "info", message = "x" }

[[rule]]
id = "D2"
title = "inline"
when.option = { kind = "option" }
then = { action = "warn", severity = "info", message = "{option.nme}" }
"""
    assert problems(tmp_path, body) == [
        "p.toml:6: rule 'D1': when.option.tensor_paralel: unknown field of fact kind 'option'",
        "p.toml:13: rule 'D2': then.message: {option.nme}: unknown field 'nme' of fact kind 'option'",
    ]


def test_missing_pack_id(tmp_path: Path) -> None:
    path = tmp_path / "p.toml"
    path.write_text('description = "no id"\n', encoding="utf-8")
    with pytest.raises(PackError) as info:
        load(path)
    assert str(info.value) == 'p.toml: pack: required: the pack id, a string like "core"'.replace("p.toml", str(path))
    assert (info.value.file, info.value.line, info.value.rule_id, info.value.field) == (str(path), None, None, "pack")


def test_duplicate_rule_ids_across_packs(tmp_path: Path) -> None:
    one = write(tmp_path, BASE, "one.toml", pack="one")
    two = write(tmp_path, BASE, "two.toml", pack="two")
    with pytest.raises(PackError) as info:
        load(one, two)
    assert str(info.value) == f"{two}:3: rule 'P1': id: duplicate rule id (first defined at {one}:3)"


def test_duplicate_pack_ids(tmp_path: Path) -> None:
    one = write(tmp_path, BASE, "one.toml")
    two = write(tmp_path, BASE.replace('"P1"', '"P2"'), "two.toml")
    with pytest.raises(PackError) as info:
        load(one, two)
    assert str(info.value) == f"{two}:1: pack: duplicate pack id 'p' (also in {one})"


def test_invalid_toml_names_the_line(tmp_path: Path) -> None:
    path = write(tmp_path, "\nx = = 1\n")
    with pytest.raises(PackError) as info:
        load(path)
    assert info.value.line == 3
    assert str(info.value).startswith(f"{path}:3: invalid TOML: Invalid value (at line 3, column 5)")


def test_unreadable_pack(tmp_path: Path) -> None:
    with pytest.raises(PackError, match="missing.toml: no such rule pack$"):
        load(tmp_path / "missing.toml")


def test_a_pack_without_rules_loads_empty(tmp_path: Path) -> None:
    assert load(write(tmp_path, 'description = "placeholder"\n')) == []


def test_a_wrong_cache_entry_never_blames_a_sound_pack(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Packs are parsed through the knowledge files' content-addressed cache; an entry that is sound in shape but
    wrong in content (here: a rule without an id) is linted, found wanting, and the text parsed afresh."""
    from gpuadvisor.knowledge import parsecache

    path = write(tmp_path, FULL)
    expected = [(r.stratum, r.id) for r in load(path)]  # fills the cache
    real_read = parsecache._read
    monkeypatch.setattr(parsecache, "_read", lambda p, sha: {"pack": "p", "rule": [{"title": "no id"}]})
    assert [(r.stratum, r.id) for r in load(path)] == expected
    monkeypatch.setattr(parsecache, "_read", real_read)
    cached = sorted((parsecache.cache_dir() / "knowledge").glob("*"))
    assert cached, "the pack's parse is cached"
