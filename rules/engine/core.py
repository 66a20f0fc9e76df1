"""`RuleEngine`: one compiled durable-rules ruleset and the consultation loop around it.

Every measured gotcha of the note (docs/durable-rules-gotchas.md) that bites at run time is handled here:

- G16 a `QuietHost` per engine: no background timer threads, every callback runs synchronously on the caller's thread;
- G6  a unique ruleset name per engine (rulesets can never be removed or replaced in a Host);
- G8  rules registered sorted by (stratum, id), so file order never changes firing order;
- G3/G7 one decimal sid per consultation from a counter, every fact with a wrapper-assigned decimal id;
- G15 each session opens with a marker fact matched by a built-in no-op rule (delete_state on a session without a
  matched fact crashes), and the session is deleted in `finally` (at most 1,024 live sessions);
- G4/G2/G20 the wrapper owns the fact store (see `Consultation`): unmatched facts are kept, repeated conclusions become
  extra justifications, nothing is ever read back with get_facts;
- G5  callback exceptions (swallowed by the engine) are recorded, later callbacks are skipped, and `consult` raises
  `RuleError`; `state['exception']` is checked too;
- G17 a callback running longer than 9 s is reported (the engine silently drops the rest of the chain after 10 s).

The agenda is driven here (`_drain`) rather than by durable's Python loop: the same C calls in the same order (start
the next action, run it, complete it), one at a time on the caller's thread, without durable's per-firing closures
(reference cycles) and JSON parsing of the matched facts (`messages.read_activation` reads their ids).
Speed notes: facts no rule pattern names are never sent to the engine; the engine only gets the fields patterns test;
input facts are prepared once per content (`InputMemo`); callbacks marked `READS_ONLY` get the stored facts instead
of copies; the cyclic garbage collector is paused while a consultation runs (`gcpause`).
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Hashable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

import durable_rules_engine as _durable_c
from durable.engine import MessageNotHandledException, MessageObservedException

from gpuadvisor.rules.engine.actions import READS_ONLY
from gpuadvisor.rules.engine.consultation import Consultation
from gpuadvisor.rules.engine.errors import EngineError, FactError, RuleDefinitionError, RuleError
from gpuadvisor.rules.engine.gcpause import paused_gc
from gpuadvisor.rules.engine.host import QuietHost
from gpuadvisor.rules.engine.messages import id_prefixes, read_activation, to_json
from gpuadvisor.rules.engine.model import Derivation, InputFact, Rule
from gpuadvisor.rules.engine.safety import engine_definition
from gpuadvisor.rules.engine.templates import parse_template
from gpuadvisor.rules.engine.values import SESSION_KIND, InputMemo, PreparedFact, prepare_fact

SESSION_RULE = "__session__"
SLOW_CALLBACK_S = 9.0
DROP_CHAIN_S = 10.0
_ruleset_names = itertools.count(1)


_Prepared = tuple[PreparedFact, str, Any]
"""An input ready to store: the prepared fact, its origin, what rides beside it."""


class _Failure:
    """The first callback failure of a run."""

    __slots__ = ("rule_id", "premises", "error")

    def __init__(self, rule_id: str, premises: tuple[int, ...], error: BaseException | str) -> None:
        self.rule_id = rule_id
        self.premises = premises
        self.error = error


class _Run:
    """State of the consultation in progress on one sid."""

    __slots__ = ("cons", "failure", "engine", "scratch")

    def __init__(self, cons: Consultation, engine: RuleEngine) -> None:
        self.cons = cons
        self.engine = engine
        self.failure: _Failure | None = None
        self.scratch: dict[Hashable, Any] = {}


class RuleContext:
    """What a callback gets as `ctx`: the rule, its premises, and ways to read and extend the fact store.

    `ctx.facts(kind)` reads facts that are not among the matched ones. By default every fact it returns becomes an
    extra premise of every conclusion this callback makes *afterwards* (a conservative choice: the trace never hides
    something a conclusion may depend on). Pass `as_premises=False` and name the facts you used with
    `conclude(..., also_from=ids)` for a tighter trace. Only facts of earlier strata (or inputs) are complete while
    a callback runs; reading a kind that the same stratum still derives gives a partial view.
    """

    __slots__ = ("_run", "_rule", "_matched", "_premise_ids", "_facts", "_read", "_open", "_where")

    def __init__(
        self,
        run: _Run,
        rule: Rule,
        premise_ids: dict[str, int],
        facts: Mapping[str, Mapping[str, Any]],
        matched: tuple[int, ...] | None = None,
        where: str | None = None,
    ) -> None:
        self._run = run
        self._rule = rule
        self._premise_ids = premise_ids
        ids = tuple(premise_ids.values()) if matched is None else matched
        self._matched = ids if len(set(ids)) == len(ids) else tuple(dict.fromkeys(ids))
        self._facts = facts  # stored facts by alias, read-only here
        self._read: list[int] = []
        self._open = True
        self._where = where if where is not None else f"conclusion of rule {rule.id!r}"

    @property
    def rule(self) -> Rule:
        return self._rule

    @property
    def scratch(self) -> dict[Hashable, Any]:
        """A dict shared by every callback of this consultation and dropped when it ends: for values derived purely
        from facts (a search shared by many accelerators, factors built from the profile), keyed by what they were
        derived from (typically fact ids). Never a way to carry anything from one consultation to the next."""
        return self._run.scratch

    @property
    def premise_ids(self) -> Mapping[str, int]:
        """alias -> id of the fact that matched it."""
        return MappingProxyType(self._premise_ids)

    def facts(self, kind: str, *, as_premises: bool = True) -> list[tuple[int, dict[str, Any]]]:
        """`(id, copy)` of every fact of `kind` stored so far, by id; see the class docstring for premises."""
        found = self._run.cons.of_kind(kind)
        if as_premises:
            self._read.extend(fid for fid, _ in found if fid not in self._read)
        return found

    def read(self, kind: str, *, as_premises: bool = True) -> list[tuple[int, Mapping[str, Any]]]:
        """Like `facts`, but the stored facts themselves rather than copies: for callbacks that only read them
        (a callback must never modify a fact it did not create)."""
        found = self._run.cons.peek_kind(kind)
        if as_premises:
            self._read.extend(fid for fid, _ in found if fid not in self._read)
        return found

    def attachment(self, fid: int) -> Any:
        """What was attached beside fact `fid` when it was concluded (None: nothing); reading it adds no premise."""
        return self._run.cons.attachment(fid)

    def render(self, template: str | None = None) -> str:
        """Render `template` (default: the rule's `message`) with the matched facts; see `templates`."""
        return parse_template(self._rule.message if template is None else template).render(self._facts)

    def conclude(self, fact: Mapping[str, Any], also_from: Sequence[int] = (), attachment: Any = None) -> int:
        """Store `fact` (or add a justification to its twin), let the engine chain on it, and return its id.

        Premises: the matched facts, then facts read with `facts()`, then `also_from`. `attachment` is kept beside
        the fact for presentation (`Consultation.attachment`), outside its identity and out of the engine's sight.
        """
        if not self._open:
            raise EngineError(f"rule {self._rule.id!r}: conclude() called after the callback returned")
        cons = self._run.cons
        if also_from or self._read:
            extra = cons.check_premises(also_from, f"rule {self._rule.id!r}: also_from") if also_from else ()
            premises = tuple(dict.fromkeys((*self._matched, *self._read, *extra)))
        else:
            premises = self._matched
        prepared = prepare_fact(fact, self._where)
        fid, new = cons.store(prepared, Derivation(self._rule.id, premises))
        if attachment is not None:
            cons.attach(fid, attachment)
        if new:
            engine = self._run.engine
            view = engine.view_if_read(prepared)
            if view is not None:  # None: no pattern names this kind, the engine would only refuse it (G4)
                engine.assert_in_action({"id": str(fid), "sid": cons.sid, **view})  # False: a leaf, kept here (G4)
        return fid

    def close(self) -> None:
        self._open = False


def _noop(_run: _Run, _matched: Mapping[str, str]) -> None:
    return None


def tested_fields(rules: Sequence[Rule]) -> dict[str, frozenset[str]] | None:
    """Per fact kind, the fields any rule pattern tests or a join reads (always including `kind`); None when a
    pattern's kind cannot be read off it, in which case facts are sent whole."""
    out: dict[str, set[str]] = {}
    for rule in rules:
        kinds_of: dict[str, set[str]] = {}
        refs: list[tuple[str, str]] = []
        for pattern in rule.when:
            for alias, condition in pattern.items():
                kinds, fields = _pattern_fields(condition, refs)
                if not kinds:
                    return None
                kinds_of[alias] = kinds
                for kind in kinds:
                    out.setdefault(kind, {"kind"}).update(fields)
        for alias, field_name in refs:  # a join reads the other fact's field: the engine needs it too
            if alias not in kinds_of:
                return None
            for kind in kinds_of[alias]:
                out.setdefault(kind, {"kind"}).add(field_name)
    return {k: frozenset(v) for k, v in out.items()}


def _pattern_fields(node: Any, refs: list[tuple[str, str]]) -> tuple[set[str], set[str]]:
    """(kinds the pattern requires, fields it tests) of a compiled condition; cross-fact references
    (`{"field": {"alias": "other_field"}}`) are appended to `refs`."""
    kinds: set[str] = set()
    fields: set[str] = set()

    def reference(value: Any) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                if not k.startswith("$") and isinstance(v, str):
                    refs.append((k, v))
                else:
                    reference(v)

    def walk(n: Any, top: bool) -> None:
        if isinstance(n, list):
            for x in n:
                walk(x, top)
            return
        if not isinstance(n, dict):
            return
        for key, value in n.items():
            if key == "$and":
                walk(value, top)
            elif key.startswith("$"):
                if isinstance(value, dict):
                    for k, v in value.items():
                        if not k.startswith("$"):
                            fields.add(k)
                            reference(v)
                        else:
                            walk({k: v}, False)
                else:
                    walk(value, False)
            else:
                fields.add(key)
                if key == "kind" and isinstance(value, str) and top:
                    kinds.add(value)
                reference(value)

    walk(node, True)
    return kinds, fields


class RuleEngine:
    """One rule set compiled into its own durable-rules Host; `consult` is thread-safe (one consultation at a time).

    Build it once per rule-pack version and reuse it: compiled rulesets are never freed (about 0.1 MB each).
    """

    def __init__(self, rules: Sequence[Rule]) -> None:
        ordered = sorted(rules, key=lambda r: (r.stratum, r.id))
        seen: set[str] = set()
        for r in ordered:
            if r.id in seen:
                raise RuleDefinitionError(f"rule id {r.id!r} is defined twice")
            seen.add(r.id)
        self._runs: dict[str, _Run] = {}
        self._actions: dict[str, Callable[[_Run, Mapping[str, str]], None]] = {SESSION_RULE: _noop}
        self._aliases: dict[str, tuple[tuple[str, str], ...]] = {SESSION_RULE: id_prefixes(("m",))}
        definitions: dict[str, Any] = {
            SESSION_RULE: {"all": [{"m": {"kind": SESSION_KIND}}], "run": self._durable_action(SESSION_RULE)}}
        for r in ordered:
            definition = engine_definition(r)  # checked deep copy: the engine deletes `run` and keeps the dict
            self._actions[r.id] = self._action(r)
            if "\\" not in r.id and '"' not in r.id:  # else its name is escaped in messages: parsed as JSON
                self._aliases[r.id] = id_prefixes(r.aliases)
            definition["run"] = self._durable_action(r.id)
            definitions[r.id] = definition
        self._rules = tuple(ordered)
        self._tested = tested_fields(ordered)
        self._tested_order = None if self._tested is None else {k: tuple(sorted(v)) for k, v in self._tested.items()}
        self._by_id: Mapping[str, Rule] = MappingProxyType({r.id: r for r in ordered})
        self._name = f"gpuadvisor_{next(_ruleset_names)}"
        self._host = QuietHost()
        self._host.register_rulesets({self._name: definitions})
        self._ruleset = self._host.get_ruleset(self._name)
        self._handle = self._ruleset._handle
        self._inputs = InputMemo()  # knowledge-base inputs are the same facts in every consultation
        self._lock = threading.Lock()
        self._owner: int | None = None
        self._sids = itertools.count(1)

    @property
    def rules(self) -> tuple[Rule, ...]:
        """The rules in registration (= firing priority) order."""
        return self._rules

    def engine_view(self, prepared: PreparedFact) -> dict[str, Any]:
        """What the C engine is sent of a fact: only the fields some rule pattern tests.

        Fields no pattern reads cannot change a match, and durable-rules serializes and parses every field it is
        given, so leaving them out (long texts, display figures) makes each assert cheaper. Identity is the
        wrapper's business (its own ids and canonical keys), never the engine's.
        """
        view = self.view_if_read(prepared)
        return {"kind": prepared.kind} if view is None else view

    def view_if_read(self, prepared: PreparedFact) -> dict[str, Any] | None:
        """`engine_view`, or None when no pattern names the fact's kind (the engine would only refuse it, G4)."""
        engine = prepared.engine
        if self._tested_order is None:
            return {k: v for k, v in engine.items() if v is not None}
        fields = self._tested_order.get(prepared.stored["kind"])
        if fields is None:
            return None
        view = {}
        for k in fields:
            v = engine.get(k)
            if v is not None:
                view[k] = v
        return view

    def reads(self, kind: str) -> bool:
        """Whether some rule pattern names fact kind `kind` (always true when a pattern's kind is unknown)."""
        return self._tested is None or kind in self._tested

    def rule(self, rule_id: str) -> Rule:
        return self._by_id[rule_id]

    # ---- the callback wrapper ----------------------------------------------------------------------------------
    def _action(self, rule: Rule) -> Callable[[_Run, Mapping[str, str]], None]:
        """The wrapper around one rule's callback: `action(run, ids)`, ids = alias -> id of the matched fact.

        Callbacks get copies of the matched facts, except the generic actions of rule packs (`READS_ONLY`), which
        only read them to render a message or a target."""
        aliases = rule.aliases
        rule_id, then = rule.id, rule.then
        copies = not getattr(then, READS_ONLY, False)
        where = f"conclusion of rule {rule_id!r}"
        monotonic = time.monotonic

        def action(run: _Run, matched: Mapping[str, str]) -> None:
            if run.failure is not None:
                return  # after the first failure no further callback runs
            cons = run.cons
            try:
                premises = tuple([int(matched[a]) for a in aliases])
                peek = cons.peek
                stored = {a: peek(p) for a, p in zip(aliases, premises, strict=True)}
            except (KeyError, TypeError, ValueError) as e:
                run.failure = _Failure(rule_id, (), f"the engine passed unexpected matches: {e!r}")
                return
            cons.record_firing(rule_id, premises)
            ctx = RuleContext(run, rule, dict(zip(aliases, premises, strict=True)), stored, premises, where)
            start = monotonic()
            try:
                if copies:
                    get = cons.get
                    then(ctx, **{a: get(p) for a, p in zip(aliases, premises, strict=True)})
                else:
                    then(ctx, **stored)
            except BaseException as e:  # noqa: B036 - the engine would swallow it; re-raised by consult()
                run.failure = _Failure(rule_id, premises, e)
            ctx._open = False
            elapsed = monotonic() - start
            if elapsed > SLOW_CALLBACK_S and run.failure is None:
                run.failure = _Failure(
                    rule_id, premises, f"callback ran {elapsed:.1f} s; the engine drops the chain after 10 s"
                )

        return action

    def _durable_action(self, name: str) -> Callable[[Any], None]:
        """What durable-rules itself would call (`run` in the ruleset definition). The wrapper drives the agenda
        itself (`_drain`), so this runs only if durable dispatches on its own; it then does the same as `_drain`."""

        def run_from_durable(closure: Any) -> None:
            run = self._runs.get(closure.s["sid"])
            if run is not None:
                self._actions[name](run, {a: f["id"] for a, f in closure._m.items()})

        return run_from_durable

    # ---- driving the engine --------------------------------------------------------------------------------------
    def assert_in_action(self, fact: Mapping[str, Any]) -> bool:
        """Assert a conclusion from inside a callback: the engine matches it and queues activations, which `_drain`
        runs. False when no rule takes the fact (G4; the wrapper's store keeps it all the same).

        What durable's `Ruleset.assert_fact` does, minus building a JSON encoder per call and a JSON message for
        the not-handled exception; engine error codes still raise, and a repeated fact (never sent: ids are unique)
        raises MessageObservedException as there."""
        code: int = _durable_c.assert_fact(self._handle, to_json(fact))[0]
        if code == 2:
            raise MessageObservedException(fact)
        return code != 1

    def _assert_top(self, run: _Run, payload: Any) -> None:
        """Assert a fact (dict) or a batch (list) from outside any callback and run the agenda to its end."""
        ruleset = self._ruleset
        state_handle = ruleset.assert_facts(payload) if isinstance(payload, list) else ruleset.assert_fact(payload)
        self._drain(run, state_handle)

    def _drain(self, run: _Run, state_handle: Any) -> None:
        """Run queued activations one at a time, synchronously, until the agenda is empty.

        The loop of durable's `Ruleset._flush_actions` without its per-firing Python objects (closures, contents,
        three clock reads): start the next action, call the wrapper, complete the action and take the next one.
        durable also writes the session state back after each action; callbacks never change it here and no rule
        tests it (the lint forbids `$s` conditions, G11), so that write is left out. A callback running 10 s or more
        stops the chain, as durable's own loop does (G17; the callback is reported as failed from 9 s on).
        """
        handle = self._ruleset._handle
        result = _durable_c.start_action_for_state(handle, state_handle)
        if not result:
            return
        message_text = result[1]
        actions = self._actions
        while True:
            start = time.monotonic()
            for name, ids in read_activation(message_text, self._aliases):
                try:
                    actions[name](run, ids)
                except BaseException as e:  # noqa: B036 - wrapper bug: recorded like a callback failure
                    if run.failure is None:
                        run.failure = _Failure(name, (), e)
            if time.monotonic() - start >= DROP_CHAIN_S:
                return
            try:
                message_text = _durable_c.complete_and_start_action(handle, state_handle)
            except BaseException:
                _durable_c.abandon_action(handle, state_handle)
                raise
            if not message_text:
                return

    # ---- consultations -----------------------------------------------------------------------------------------
    def consult(self, inputs: Sequence[InputFact | tuple[Mapping[str, Any], str]]) -> Consultation:
        """Run the rules over `inputs` and return every fact with its derivations.

        Inputs are validated first (FactError names the fact kind and field), then asserted in canonical order
        (kind, then canonical JSON), so the result does not depend on the order of `inputs`.
        Raises RuleError naming the rule and its premise facts when a callback fails.
        """
        with paused_gc():  # a consultation makes no reference cycles: the collector would only re-walk the heap
            prepared = self._prepare(inputs)
            me = threading.get_ident()
            if self._owner == me:
                raise EngineError("consult() called from inside a rule callback of the same engine")
            with self._lock:
                self._owner = me
                try:
                    return self._consult_locked(prepared)
                finally:
                    self._owner = None

    def _prepare(self, inputs: Sequence[InputFact | tuple[Mapping[str, Any], str]]) -> list[_Prepared]:
        out: list[_Prepared] = []
        memo = self._inputs
        for i, item in enumerate(inputs):
            attachment = item.attachment if isinstance(item, InputFact) else None
            try:
                fact, origin = item[:2] if isinstance(item, InputFact) else item
            except (TypeError, ValueError) as e:
                raise FactError(f"input #{i}: expected InputFact(fact, origin), got {item!r}") from e
            if not isinstance(origin, str) or not origin:
                raise FactError(f"input #{i}: origin must be a non-empty string, got {origin!r}")
            out.append((memo.prepare(fact, origin), origin, attachment))
        out.sort(key=lambda po: (po[0].kind, po[0].key, po[1]))
        return out

    def _consult_locked(self, prepared: list[_Prepared]) -> Consultation:
        sid = str(next(self._sids))
        cons = Consultation(sid, self._by_id)
        run = _Run(cons, self)
        self._runs[sid] = run
        opened = False
        try:
            self._assert_top(run, {"id": "0", "sid": sid, "kind": SESSION_KIND})
            opened = True
            fresh: list[tuple[int, PreparedFact]] = []
            for p, origin, attachment in prepared:  # store every input first: ids 1..n, all visible to ctx.facts()
                fid, new = cons.store(p, Derivation(None, (), origin))
                if attachment is not None:
                    cons.attach(fid, attachment)
                if new:
                    fresh.append((fid, p))
            self._assert_inputs(run, fresh)
            state = self._host.get_state(self._name, sid)
        except BaseException:
            self._close(sid, opened, suppress=True)
            raise
        self._close(sid, opened, suppress=False)
        if run.failure is not None:
            raise self._rule_error(cons, run.failure)
        if "exception" in state:
            raise RuleError(None, (), (), f"the engine reported: {str(state['exception'])[:500]}")
        return cons

    def _assert_inputs(self, run: _Run, fresh: list[tuple[int, PreparedFact]]) -> None:
        """Assert all inputs in one batch, so the agenda runs strictly by stratum over all of them.

        Asserted one by one, each input's whole chain (all strata) would run before the next input is even seen.
        A batch with an input no rule takes raises MessageNotHandledException after storing the others, with their
        activations queued but not run (observed); a second session marker then drains the agenda.
        """
        if not fresh:
            return
        sid = run.cons.sid
        batch = [{"id": str(fid), "sid": sid, **self.engine_view(p)} for fid, p in fresh]
        try:
            self._assert_top(run, batch)
            return
        except MessageNotHandledException:
            pass  # inputs no rule reads stay in the store only (G4)
        except Exception as e:  # an engine error code: name the inputs, they passed our own checks
            raise RuleError(None, (), (), f"the engine refused the inputs: {e!r}") from e
        try:  # id "-1": its 32-bit FNV-1a hash collides with no decimal id below 2,000,000 (G3; checked)
            self._assert_top(run, {"id": "-1", "sid": sid, "kind": SESSION_KIND})
        except Exception as e:
            raise RuleError(None, (), (), f"the engine failed to run the queued rules: {e!r}") from e

    def _close(self, sid: str, opened: bool, *, suppress: bool) -> None:
        self._runs.pop(sid, None)
        if not opened:
            return  # never delete a session without a matched fact (G15)
        try:
            self._host.delete_state(self._name, sid)
        except Exception as e:
            if not suppress:
                raise EngineError(f"could not delete engine session {sid}: {e!r}") from e

    @staticmethod
    def _rule_error(cons: Consultation, failure: _Failure) -> BaseException:
        err = failure.error
        if isinstance(err, BaseException) and not isinstance(err, Exception):
            return err  # KeyboardInterrupt, SystemExit: re-raised as they are
        detail = f"{type(err).__name__}: {err}" if isinstance(err, Exception) else err
        facts = [cons.get(p) if p in cons.facts else None for p in failure.premises]
        error = RuleError(failure.rule_id, failure.premises, facts, detail)
        error.consultation = cons
        if isinstance(err, Exception):
            error.__cause__ = err
        return error
