"""The generated functional API's overload choosers (typedops/codegen/_api.py)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import typedops.core._generated as generated
from typedops import core, tensor
from typedops.codegen._api import chooser_lines
from typedops.dispatch import binding_problem
from typedops.schema import FunctionSchema, parse_schema
from tests.helpers import bound_overload


def test_an_overload_that_takes_fewer_positional_arguments_than_the_others_require() -> None:
    short = parse_schema("ns::sum(Tensor self, *, ScalarType? dtype=None) -> Tensor")
    long = parse_schema("ns::sum.dim(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor")
    lines = chooser_lines("sum", [short, long], ["short.call", "long.call"], "_C")
    assert lines[2:] == [
        "    if len(args) <= 1 and 'dim' not in kwargs:",
        "        return short.call(*args, **kwargs)",
        "    if len(args) > 1:",
        "        return long.call(*args, **kwargs)",
        "    return _choose('ns::sum', _C, args, kwargs)",
    ]


def test_an_overload_chosen_because_the_others_require_a_keyword_it_lacks() -> None:
    plain = parse_schema("ns::sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor")
    out = parse_schema("ns::sub.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)")
    assert chooser_lines("sub", [plain, out], ["plain.call", "out.call"], "_C")[2:] == [
        "    if 'out' in kwargs and kwargs['out'] is None:",  # Note [out=None] in dispatch/_ops.py
        "        del kwargs['out']",
        "    if 'out' not in kwargs:",
        "        return plain.call(*args, **kwargs)",
        "    return out.call(*args, **kwargs)",  # the complement: no unreachable choose after it
    ]


def test_no_arity_test_when_another_overload_could_take_as_few_arguments() -> None:
    a = parse_schema("ns::f(Tensor self, int x=0) -> Tensor")
    b = parse_schema("ns::f.y(Tensor self, bool y=False) -> Tensor")
    assert chooser_lines("f", [a, b], ["a", "b"], "_C")[2:] == ["    return _choose('ns::f', _C, args, kwargs)"]


def test_positional_calls_skip_the_keyword_tests() -> None:
    """Note [Positional calls of choosers]: with no keywords, ``'out' in kwargs`` is
    decided (the out overload drops out) and the targets get the values themselves."""
    tensor_ = parse_schema("ns::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor")
    out = parse_schema("ns::add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)")
    scalar = parse_schema("ns::add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor")
    lines = chooser_lines("add", [tensor_, out, scalar], ["t.call", "o.call", "s.call"], "_C", positional=True)
    assert lines[2:12] == [
        "    if not kwargs:",
        "        if len(args) == 2:",
        "            _v0, _v1 = args",
        "            if isinstance(_v1, _Tensor):",
        "                return t.call(_v0, _v1)",
        "            if isinstance(_v1, _NUMBERS):",
        "                return s.call(_v0, _v1)",
        "    if 'out' in kwargs and kwargs['out'] is None:",  # after the fast path: Note [out=None]
        "        del kwargs['out']",
        "    _v1 = args[1] if len(args) > 1 else kwargs.get('other', _MISSING)",
    ]
    short = parse_schema("ns::sum(Tensor self, *, ScalarType? dtype=None) -> Tensor")
    long = parse_schema("ns::sum.dim(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor")
    assert chooser_lines("sum", [short, long], ["short.call", "long.call"], "_C", positional=True)[2:9] == [
        "    if not kwargs:",
        "        if len(args) == 1:",
        "            _v0, = args",
        "            return short.call(_v0)",
        "        if len(args) == 2:",
        "            _v0, _v1 = args",
        "            return long.call(_v0, _v1)",
    ]


def test_the_core_sum_chooser_still_reaches_every_overload() -> None:
    x = tensor([[1.0, 2.0], [3.0, 4.0]])
    assert core.sum(x).tolist() == 10.0 and core.sum(x, dtype=None).tolist() == 10.0
    assert core.sum(x, [0]).tolist() == [4.0, 6.0] and core.sum(x, dim=[1]).tolist() == [3.0, 7.0]
    assert core.sum(self=x).tolist() == 10.0 and x.sum().tolist() == 10.0


# -- every chooser of the core library picks what the binding rule picks

_CHOOSERS: list[tuple[str, list[FunctionSchema]]] = sorted(
    (name[len("_CANDIDATES_"):], [schema for schema, _ in table])
    for name, table in vars(generated).items()
    if name.startswith("_CANDIDATES_")
)


def _chooser(name: str, schemas: list[FunctionSchema], positional: bool) -> Any:
    """The generated chooser of ``schemas``, returning the index of the overload it calls
    (``choose`` standing for the binding rule); ``positional``: with the fast path of
    Note [Positional calls of choosers]."""

    def choose(_name: str, candidates: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> int | None:
        return next((i for i, s in enumerate(candidates) if binding_problem(s, args, kwargs) is None), None)

    targets = [f"_t{i}" for i in range(len(schemas))]
    namespace: dict[str, Any] = {
        "Any": Any, "_Tensor": type(tensor(0.0)), "_NUMBERS": (int, float, complex), "_MISSING": object(),
        "_choose": choose, "_C": schemas,
        **{t: (lambda i: lambda *a, **k: i)(i) for i, t in enumerate(targets)},
    }  # fmt: skip
    exec("\n".join(chooser_lines(name, schemas, targets, "_C", positional=positional)), namespace)
    return namespace[name]


_VALUES = st.sampled_from([tensor([1.0, 2.0]), 0, 2.5, [0], None, True, "a"])


@given(st.data())
@settings(max_examples=300, deadline=None)
def test_every_core_chooser_picks_the_overload_the_binding_rule_picks(data: st.DataObject) -> None:
    name, schemas = data.draw(st.sampled_from(_CHOOSERS))
    names = sorted({a.name for s in schemas for a in s.arguments})
    args = tuple(data.draw(st.lists(_VALUES, max_size=4)))
    kwargs = data.draw(st.dictionaries(st.sampled_from(names), _VALUES, max_size=2))
    expected = bound_overload(name, schemas, args, kwargs)
    if expected is not None:  # a call no overload takes may get any overload's own error
        assert _chooser(name, schemas, positional=False)(*args, **dict(kwargs)) == expected
        assert _chooser(name, schemas, positional=True)(*args, **dict(kwargs)) == expected



def test_out_none_is_no_out_for_every_chooser_with_an_out_overload() -> None:
    """Note [out=None] in typedops/dispatch/_ops.py: the chooser drops it, then picks as
    for a call without it (the binding rule refuses None for a Tensor out)."""
    plain = parse_schema("ns::sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor")
    out = parse_schema("ns::sub.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)")
    x = tensor([1.0])
    for positional in (False, True):
        chooser = _chooser("sub", [plain, out], positional)
        assert chooser(x, x, out=None) == 0 and chooser(x, x, alpha=2, out=None) == 0 and chooser(x, x, out=x) == 1
    assert binding_problem(out, (x, x), {"out": None}) == "argument 'out': expected Tensor, got None"


def test_out_none_through_the_core_choosers_is_the_call_without_out() -> None:
    a, b = tensor([1.0, 2.0]), tensor([3.0, 5.0])
    assert core.add(a, b, out=None).tolist() == [4.0, 7.0]  # the chooser with a positional fast path
    assert core.add(a, 2, out=None).tolist() == [3.0, 4.0]  # no add.Scalar.out: add.Scalar
    assert core.sub(a, b, alpha=2, out=None).tolist() == [-5.0, -8.0]  # a merged chooser
    assert core.sub(a, b, out=None).tolist() == [-2.0, -3.0]
    assert core.exp(a, out=None).tolist() == core.exp(a).tolist()
    assert core.div(self=a, other=b, out=None).tolist() == core.div(a, b).tolist()
    result = core.zeros([2])
    assert core.mul(a, b, out=result) is result and result.tolist() == [3.0, 10.0]


@pytest.mark.compat
def test_out_none_is_no_out_as_in_torch() -> None:
    torch = pytest.importorskip("torch")
    a, b = tensor([1.0, 2.0]), tensor([3.0, 5.0])
    ta, tb = torch.tensor([1.0, 2.0]), torch.tensor([3.0, 5.0])
    pairs: list[tuple[Any, Any]] = [
        (core.add(a, b, out=None), torch.add(ta, tb, out=None)),
        (core.add(a, 2, out=None), torch.add(ta, 2, out=None)),
        (core.sub(a, b, alpha=2, out=None), torch.sub(ta, tb, alpha=2, out=None)),
        (core.mul(a, b, out=None), torch.mul(ta, tb, out=None)),
        (core.div(a, b, out=None), torch.div(ta, tb, out=None)),
        (core.exp(a, out=None), torch.exp(ta, out=None)),
    ]
    for ours, theirs in pairs:
        assert ours.tolist() == pytest.approx(theirs.tolist(), rel=1e-6)  # exp: numpy and torch round apart


@pytest.mark.parametrize(
    ("schema", "sizes"),
    [
        ("ns::view(Tensor(a) self, SymInt[] size) -> Tensor(a)", "size"),
        ("ns::permute(Tensor(a) self, int[] dims) -> Tensor(a)", "dims"),
        ("ns::expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)", "size"),
        ("ns::amax(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor", None),  # two positional
        ("ns::f(Tensor self, float[] w) -> Tensor", None),  # not ints
        ("ns::zeros(SymInt[] size, *, ScalarType? dtype=None) -> Tensor", None),  # no self
        ("ns::g(int[] dims, Tensor self) -> Tensor", None),  # self not first
    ],
)
def test_which_methods_take_their_sizes_as_varargs(schema: str, sizes: str | None) -> None:
    """Note [Sizes as varargs]: PyTorch's rule, the only positional argument after self an int list."""
    from typedops.codegen._model import sizes_as_varargs

    assert sizes_as_varargs(parse_schema(schema)) == sizes


def test_a_varargs_method_is_a_wrapper_and_keeps_its_keywords() -> None:
    import inspect

    source = inspect.getsource(generated)
    assert "def _method_expand(self: Any, size: Any, *_sizes: Any, **kwargs: Any) -> Any:" in source
    assert "def _method_view(self: Any, size: Any, *_sizes: Any) -> Any:" in source
    assert core.ones([3, 1]).expand(2, 3, 4, implicit=True).shape == (2, 3, 4)
