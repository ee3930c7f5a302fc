"""vmap's surface (typedops/batching/_vmap.py): in_dims and out_dims, levels, chunks,
randomness, autograd through a vmapped function, and the errors with their exact words."""

from __future__ import annotations

import asyncio
import re
import warnings
from typing import Any, NamedTuple

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import typedops
from typedops import Tensor, core, tensor, vmap
from typedops.batching import BatchedTensor, VmapError, current_levels, force_fallback, is_batched, tree_flatten, tree_unflatten
from typedops.vocabulary import ArgumentValueError, ScalarType

F32 = ScalarType.float32


def t(data: Any) -> Tensor:
    return tensor(np.asarray(data, dtype=np.float32))


def arange(*shape: int) -> Tensor:
    return t(np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape))


def same(a: Tensor, b: Any) -> None:
    expected = b.numpy() if isinstance(b, Tensor) else np.asarray(b)
    assert a.shape == expected.shape
    np.testing.assert_allclose(a.numpy(), expected, rtol=1e-5, atol=1e-6)


# -- in_dims -------------------------------------------------------------------------------------
def test_maps_over_the_first_dimension_by_default() -> None:
    x = arange(3, 4)
    same(vmap(lambda a: a * 2)(x), x.numpy() * 2)


@pytest.mark.parametrize("in_dim", [0, 1, -1, -2])
def test_in_dims_pick_the_batch_dimension(in_dim: int) -> None:
    x = arange(3, 3)
    y = arange(3)
    out = vmap(lambda a, b: a * b, in_dims=(in_dim, None))(x, y)
    moved = np.moveaxis(x.numpy(), in_dim, 0)
    same(out, moved * y.numpy())


def test_nested_in_dims_for_tuples_lists_and_dicts() -> None:
    x, y, z = arange(2, 3), arange(3), arange(3, 2)

    def f(pair: tuple[Tensor, Tensor], items: list[Tensor], named: dict[str, Tensor]) -> Tensor:
        return pair[0] + pair[1] + items[0] + named["w"]

    out = vmap(f, in_dims=((0, None), [1], {"w": 1}))((x, y), [z], {"w": z})
    same(out, x.numpy() + y.numpy() + 2 * z.numpy().T)


def test_scalars_and_non_tensors_pass_through() -> None:
    x = arange(2, 3)
    out = vmap(lambda a, k, name: a * k, in_dims=(0, None, None))(x, 3.0, "ignored")
    same(out, x.numpy() * 3)
    same(vmap(lambda a, *, k: a * k)(x, k=2.0), x.numpy() * 2)


def test_out_dims_place_the_batch_dimension() -> None:
    x = arange(2, 3)
    same(vmap(lambda a: a + 1, out_dims=1)(x), (x.numpy() + 1).T)
    same(vmap(lambda a: a + 1, out_dims=-1)(x), (x.numpy() + 1).T)
    first, second = vmap(lambda a: (a, a * 2), out_dims=(0, 1))(x)
    same(first, x.numpy())
    same(second, (x.numpy() * 2).T)


def test_an_unbatched_output_is_expanded_over_the_batch() -> None:
    x, w = arange(4, 2), arange(2)
    same(vmap(lambda a: w * 2)(x), np.broadcast_to(w.numpy() * 2, (4, 2)))
    assert vmap(lambda a: w, out_dims=None)(x) is w


def test_chunk_size_gives_the_same_result() -> None:
    x = arange(5, 3)
    same(vmap(lambda a: a.sum(0) * a, chunk_size=2)(x), vmap(lambda a: a.sum(0) * a)(x))
    same(vmap(lambda a: a * 2, chunk_size=2, out_dims=1)(x), (x.numpy() * 2).T)


# -- levels ------------------------------------------------------------------------------------
def test_nested_vmap_keeps_the_batch_dimensions_apart() -> None:
    x, y = arange(2, 3), arange(3, 4)
    outer = vmap(vmap(lambda a, b: a * b, in_dims=(0, None)), in_dims=(None, 1))(x, y)
    # outer over y's columns (4), inner over x's rows (2): out[j, i, k] = x[i, k] * y[k, j]
    same(outer, np.einsum("ik,kj->jik", x.numpy(), y.numpy()))


def test_inside_vmap_a_function_sees_one_sample() -> None:
    seen: list[tuple[int, ...]] = []

    def f(a: Tensor) -> Tensor:
        seen.append(a.shape)
        assert is_batched(a) and isinstance(a, BatchedTensor)
        assert len(current_levels()) == 1 and current_levels()[0].batch_size == 5
        return a

    vmap(f, in_dims=1)(arange(2, 5, 3))
    assert seen == [(2, 3)]
    assert current_levels() == ()


def test_levels_are_per_asyncio_task() -> None:
    async def inner() -> int:
        return len(current_levels())

    async def main() -> list[int]:
        return list(await asyncio.gather(inner(), inner()))

    counts: list[int] = []

    def f(a: Tensor) -> Tensor:
        counts.extend(asyncio.run(main()))
        return a

    vmap(f)(arange(2))
    assert counts == [1, 1]  # a task starts with a copy of its creator's context


# -- randomness --------------------------------------------------------------------------------
def test_randomness_modes() -> None:
    x = arange(4, 2)
    with pytest.raises(VmapError, match=re.escape("vmap: called random operation while in randomness error mode")):
        vmap(lambda a: core.randn([2]))(x)
    same_draw = vmap(lambda a: core.randn([2]), randomness="same")(x).numpy()
    assert (same_draw == same_draw[0]).all()
    different = vmap(lambda a: core.randn([2]), randomness="different")(x).numpy()
    assert not (different == different[0]).all()
    nested = vmap(vmap(lambda a: core.randn([]), randomness="different"), randomness="different")(arange(3, 2))
    assert nested.shape == (3, 2) and len(set(nested.numpy().ravel().tolist())) == 6


# -- autograd through vmap ----------------------------------------------------------------------
def test_backward_through_a_vmapped_function_matches_the_loop() -> None:
    x = arange(3, 4)
    w = tensor(np.linspace(0.5, 2.0, 4, dtype=np.float32), requires_grad=True)
    vmap(lambda a: (a * w).exp().sum(0))(x).sum().backward()
    batched = w.grad
    assert batched is not None
    looped = tensor(np.zeros(4, dtype=np.float32))
    for i in range(3):
        (gi,) = typedops.autograd.grad((core.select(x, 0, i) * w).exp().sum(0), [w])
        assert gi is not None
        looped = looped + gi
    same(batched, looped)


# -- errors, word for word -------------------------------------------------------------------------
def errors(fn: Any, *args: Any, **kwargs: Any) -> str:
    with pytest.raises(typedops.TypedopsError) as info:
        fn(*args, **kwargs)
    return str(info.value)


def double(a: Tensor) -> Tensor:
    return a * 2


def test_argument_errors() -> None:
    x, y = arange(2, 3), arange(3, 3)
    assert errors(vmap(double, in_dims=(0, 0)), x) == (
        "vmap(double, in_dims=(0, 0), ...)(<inputs>): in_dims is not compatible with the structure of "
        "`inputs`. in_dims has structure (*, *) but inputs has structure (*,): give one in_dim per argument "
        "(a tuple), nested like the argument"
    )
    assert errors(vmap(double, in_dims=(2,)), x) == (
        "vmap(double, in_dims=(2,), ...)(<inputs>): Got in_dim=2 for some input, but that input is a "
        "Tensor of dimensionality 2 so expected in_dim to satisfy -2 <= in_dim < 2."
    )
    assert errors(vmap(lambda a, k: a, in_dims=(0, 0)), x, 3) == (
        "vmap(<lambda>, in_dims=(0, 0), ...)(<inputs>): Got in_dim=0 for an input but the input is of type "
        "<class 'int'>. We cannot vmap over non-Tensor arguments, please use None as the respective in_dim"
    )
    assert errors(vmap(lambda a, b: a, in_dims=(0, 0)), x, y) == (
        "vmap: Expected all tensors to have the same size in the mapped dimension, got sizes [2, 3] for "
        "the mapped dimension (arguments args[0], args[1])"
    )
    assert errors(vmap(double, in_dims=(None,)), x) == (
        "vmap: Expected at least one Tensor to vmap over: every in_dim is None or no argument is a tensor. "
        "Give the batched argument an int in_dim"
    )
    assert errors(vmap, double, in_dims=[0]) == (
        "vmap(double, in_dims=[0], ...)(<inputs>): expected `in_dims` to be int or a (potentially nested) "
        "tuple matching the structure of inputs, got: <class 'list'>."
    )
    assert errors(vmap, double, randomness="sometimes") == (
        "Only allowed values for randomness are 'error', 'different', or 'same'. Got 'sometimes'"
    )
    assert errors(vmap, double, chunk_size=0) == "vmap: chunk_size should be None or greater than 0. (got 0)"
    assert errors(vmap(double)) == (
        "vmap(double)(<inputs>): got no inputs. Maybe you forgot to add inputs, or you are trying to vmap "
        "over a function with no inputs. The latter is unsupported."
    )


def test_output_errors() -> None:
    x = arange(2, 3)
    assert errors(vmap(lambda a: 3), x) == (
        "vmap(<lambda>, ...): `<lambda>` must only return Tensors, got type <class 'int'>. Did you mean to "
        "set out_dims= to None for output?"
    )
    assert errors(vmap(double, out_dims=None), x) == (
        "vmap(double, ...): `double` can not return a BatchedTensor when out_dim is None: the output differs "
        "across the batch, so give it an int out_dim"
    )
    assert errors(vmap(double, out_dims=(0, 1)), x) == (
        "vmap(double, ..., out_dims=(0, 1))(<inputs>): out_dims is not compatible with the structure of "
        "`outputs`. out_dims has structure (*, *) but outputs has structure *."
    )
    assert errors(vmap(double, out_dims=3), x) == (
        "vmap(double, ..., out_dims=3): out_dim 3 is out of range for an output of 1 dimensions plus the "
        "batch dimension (expected -2 <= out_dim < 2)"
    )
    assert errors(vmap, double, out_dims="x") == (
        "vmap(double, ..., out_dims='x'): `out_dims` must be an int, None or a python collection of ints "
        "representing where in the outputs the vmapped dimension should appear."
    )


def test_errors_are_rooted_and_builtin() -> None:
    with pytest.raises(ValueError):
        vmap(double, in_dims=(5,))(arange(2))
    with pytest.raises(RuntimeError):
        vmap(lambda a: a.item())(arange(2))


def test_data_dependent_code_refuses_a_batched_tensor() -> None:
    x = arange(2, 3)
    assert errors(vmap(lambda a: a.sum().item()), x) == (
        "vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over calling .item() "
        "on a Tensor, please try to rewrite what you're doing with other operations (e.g. where() instead "
        "of an if on a value)."
    )
    assert errors(vmap(lambda a: a if a.sum() > 0 else -a), x) == (
        "vmap: It looks like you're attempting to use a Tensor in some data-dependent control flow. We don't "
        "support that yet: each sample of the batch may take another branch. Rewrite the branch with "
        "where(condition, a, b)."
    )
    assert errors(vmap(lambda a: (a.numpy(), a)[1]), x) == (
        "vmap: numpy() reads the data of a batched tensor, which holds the whole batch; inside vmap a "
        "function sees one sample and may only call operators on it. Compute with operators, or return the "
        "tensor from the vmapped function and read it there"
    )


def test_in_place_on_an_unbatched_tensor_with_a_batched_argument() -> None:
    x, y = arange(2, 3), arange(3)
    message = errors(vmap(lambda a, b: b.add_(a), in_dims=(0, None)), x, y)
    assert message == (
        "vmap: core::add_.Tensor(self, *extra_args) is not possible because there exists a Tensor `other` in "
        "extra_args that has more elements than `self`. This happened due to `other` being vmapped over but "
        "`self` not being vmapped over in a vmap. Please try to use out-of-place operators instead of "
        "core::add_.Tensor. If said operator is being called inside the typedops library, please file a bug "
        "report instead."
    )
    same(y, np.arange(3))  # unchanged
    # in place on the batched tensor writes the caller's tensor, as in torch
    vmap(lambda a, b: a.add_(b), in_dims=(0, None))(x, y)
    same(x, np.arange(6).reshape(2, 3) + np.arange(3))


ESCAPED = re.compile(
    r"vmap: a batched tensor of vmap level \d+ was used after that vmap returned \(it escaped, e\.g\. kept in "
    r"a global or a closure\)\. Return tensors from the vmapped function instead of storing them"
)


def escaped_sample() -> Tensor:
    kept: list[Tensor] = []

    def keep(a: Tensor) -> Tensor:
        kept.append(a)
        return a

    vmap(keep)(arange(2, 3))
    return kept[0]


# one call per rule family (and each written-out pointwise rule) on an escaped sample of shape (3,)
ESCAPED_USES: dict[str, Any] = {
    "pointwise unary": core.exp,
    "pointwise binary": lambda e: e * 2,
    "pointwise in place": lambda e: e.mul_(t([2.0, 2.0, 2.0])),
    "pointwise three tensors": lambda e: core.where(e > 1.0, e, t([0.0, 0.0, 0.0])),
    "reduction": lambda e: e.sum(),
    "reduction dim": lambda e: e.sum(0),
    "matmul": lambda e: e @ t([1.0, 1.0, 1.0]),
    "matmul right": lambda e: t([1.0, 1.0, 1.0]) @ e,
    "shape": lambda e: e.view([3]),
    "dims": lambda e: e.permute([0]),
    "new_dim": lambda e: e.unsqueeze(0),
    "cat": lambda e: core.cat([e, e], 0),
    "composite": lambda e: e.flatten(),
    "composite returning its input": lambda e: e.contiguous(),  # its kernel calls no op
    "composite of a list": lambda e: core.stack([t([0.0, 0.0, 0.0]), e]),
}


@pytest.mark.parametrize("use", list(ESCAPED_USES), ids=list(ESCAPED_USES))
@pytest.mark.parametrize("forced", [False, True], ids=["rules", "fallback"])
def test_an_escaped_batched_tensor_refuses_to_compute(use: str, forced: bool) -> None:
    e = escaped_sample()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if forced:
            with force_fallback():
                message = errors(ESCAPED_USES[use], e)
        else:
            message = errors(ESCAPED_USES[use], e)
    assert ESCAPED.fullmatch(message)


@pytest.mark.filterwarnings("ignore:There is a performance drop")  # the fallback warns once per op
def test_force_fallback_is_per_thread_and_blocks_in_many_threads_all_close() -> None:
    """Note [Forcing the fallback]: threads entering and leaving blocks at once lose no
    change, and a block forces only its own thread (a view's rule returns a view of the
    input; the forced fallback, stacked copies)."""
    import threading

    from typedops.batching import _fallback

    x = arange(2, 3)

    def by_rule() -> bool:
        return vmap(lambda r: r.view([3]))(x).storage is x.storage

    seen: list[bool] = []

    def forcing() -> None:
        for _ in range(50):
            with force_fallback():
                seen.append(by_rule())

    threads = [threading.Thread(target=forcing) for _ in range(4)]
    for thread in threads:
        thread.start()
    unforced = [by_rule() for _ in range(50)]
    for thread in threads:
        thread.join()
    assert seen == [False] * 200 and unforced == [True] * 50
    assert _fallback._open_blocks == [] and by_rule()


def test_an_escaped_batched_tensor_refuses_to_compute_in_a_later_vmap() -> None:
    e = escaped_sample()
    assert ESCAPED.fullmatch(errors(vmap(lambda b: b + e), arange(5, 3)))  # the later level is larger
    assert ESCAPED.fullmatch(errors(vmap(lambda b: e + b), arange(5, 3)))
    assert ESCAPED.fullmatch(errors(vmap(lambda b: e.sum() * b), arange(5)))
    assert ESCAPED.fullmatch(errors(vmap(lambda b: e), arange(5)))  # returned: expanded over the batch


def test_a_tensor_escaped_from_an_inner_vmap_refuses_inside_the_outer_one() -> None:
    kept: list[Tensor] = []

    def keep(b: Tensor) -> Tensor:
        kept.append(b)
        return b

    def outer(a: Tensor) -> Tensor:
        vmap(keep)(a)
        return a * kept[0]  # the inner level is larger than the running outer one

    assert ESCAPED.fullmatch(errors(vmap(outer), arange(2, 3, 4)))


class Pair(NamedTuple):
    a: Any  # tensors, or their in_dims / out_dims
    b: Any


def test_namedtuples_keep_their_type_in_inputs_and_outputs() -> None:
    x, y = arange(2, 3), arange(3)
    seen: list[type] = []

    def f(p: Pair, named: dict[str, Pair]) -> Pair:
        seen.extend([type(p), type(named["q"])])
        return Pair(p.a + p.b, named["q"].b)

    out = vmap(f, in_dims=(Pair(0, None), {"q": (None, 0)}))(Pair(x, y), {"q": Pair(y, x)})
    assert seen == [Pair, Pair]
    assert type(out) is Pair
    same(out.a, x.numpy() + y.numpy())
    same(out.b, x)
    assert type(vmap(lambda a: Pair(a, a), out_dims=Pair(0, 1))(x)) is Pair


LEAVES = st.integers() | st.floats(allow_nan=False) | st.none() | st.text(max_size=2)
TREES = st.recursive(
    LEAVES,
    lambda inner: st.lists(inner, max_size=3)
    | st.lists(inner, max_size=3).map(tuple)
    | st.builds(Pair, inner, inner)
    | st.dictionaries(st.text(max_size=2), inner, max_size=3),
    max_leaves=10,
)


@given(TREES)
def test_a_tree_flattens_and_rebuilds_as_itself(tree: Any) -> None:
    leaves, spec = tree_flatten(tree)
    rebuilt = tree_unflatten(leaves, spec)
    assert rebuilt == tree
    assert tree_flatten(rebuilt) == (leaves, spec)  # the same types all the way down


def test_vmap_is_exported() -> None:
    assert typedops.vmap is vmap
    assert t([1.0]).dtype is F32


@pytest.mark.parametrize("name", ["floor_divide", "remainder"])
def test_an_out_op_without_a_rule_runs_per_sample_through_the_fallback(name: str) -> None:
    # torch.vmap refuses floor_divide.out and remainder.Tensor_out; the for-loop fallback
    # writes each sample's result into its slice of the batched out tensor
    a, b = typedops.tensor([[7.0, -7.0], [5.0, 3.5]]), typedops.tensor([[2.0, 3.0], [-2.0, 1.5]])
    fn = getattr(core, name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = vmap(lambda x, y: fn(x, y, out=core.zeros_like(x)))(a, b)
    assert got.tolist() == [fn(a.select(0, i), b.select(0, i)).tolist() for i in range(2)]


def test_advanced_indexing_runs_per_sample_through_the_fallback() -> None:
    # index.Tensor, index_put and index_put_ have no rule: the for-loop fallback runs them
    x = typedops.tensor(np.arange(24, dtype=np.float32).reshape(2, 3, 4).tolist())
    rows = typedops.tensor([2, 0])

    def picked(s: Tensor) -> Tensor:
        return s[rows] * 2

    def written(s: Tensor) -> Tensor:
        t = s * 1
        t[rows, 1] = typedops.tensor(-1.0)
        return core.index_put(t, [None, typedops.tensor([0])], typedops.tensor([5.0]), True)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for fn in (picked, written):
            got: Tensor = vmap(fn)(x)
            assert got.tolist() == [fn(x.select(0, i)).tolist() for i in range(2)]


@pytest.mark.parametrize("in_dims", [(0, 0, None), (-1, None, None), (None, 0, None), (0, None, 0)])
def test_masked_fill_with_a_tensor_value_equals_the_per_sample_loop(in_dims: tuple[int | None, ...]) -> None:
    # torch.vmap raises on the second and third placements; the composite's parts batch here
    rng = np.random.default_rng(3)
    batched = {0: (3, 2, 3), -1: (2, 3, 3)}
    x = typedops.tensor(rng.uniform(size=batched[in_dims[0]] if in_dims[0] is not None else (2, 3)).tolist())
    mask = typedops.tensor((rng.uniform(size=(3, 3) if in_dims[1] == 0 else (3,)) > 0.5).tolist())
    value = typedops.tensor(rng.uniform(size=(3,) if in_dims[2] == 0 else ()).tolist())
    got: Tensor = vmap(lambda a, m, v: a.masked_fill(m, v), in_dims=in_dims)(x, mask, value)

    def sample(t: Tensor, dim: int | None, i: int) -> Tensor:
        return t if dim is None else t.select(dim, i)

    expected = [sample(x, in_dims[0], i).masked_fill(sample(mask, in_dims[1], i), sample(value, in_dims[2], i))
                for i in range(3)]  # fmt: skip
    assert got.tolist() == [e.tolist() for e in expected]


def test_index_tensors_given_as_a_tuple_are_split_per_sample() -> None:
    # the fallback splits a Tensor?[] passed as a tuple as it splits a list (it re-entered
    # itself with the batched index, RecursionError)
    rows = typedops.tensor([[0, 0], [1, 2]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got: Tensor = vmap(lambda i: core.zeros([3]).index_put((i,), typedops.tensor(1.0), True))(rows)
        picked: Tensor = vmap(lambda i: core.arange(3.0).index((i,)))(rows)
    assert got.tolist() == [[2.0, 0.0, 0.0], [0.0, 1.0, 1.0]] and picked.tolist() == [[0.0, 0.0], [1.0, 2.0]]
