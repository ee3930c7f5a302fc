"""The end-to-end demo (``make demo``): a tour of what typedops does today.

Run it with ``python -m typedops.demo``; every section prints what it shows.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from . import DispatchKey, Library, OperatorHandle, Tensor, include_keys, op, tensor
from .schema import (
    SchemaParseError,
    is_backward_compatible_with,
    parse_schema,
)


def _section(title: str) -> None:
    print(f"\n== {title} " + "=" * max(0, 66 - len(title)))


def schema_language() -> None:
    _section("The schema language: parse, inspect, print")
    text = "aten::add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)"
    schema = parse_schema(text)
    print(f"parsed:      {text}")
    print(f"name:        {schema.full_name}  (namespace {schema.namespace!r}, overload {schema.overload_name!r})")
    print(f"positional:  {', '.join(a.name + ': ' + str(a.type) for a in schema.positional)}")
    print(f"kwarg-only:  {', '.join(a.name + ': ' + str(a.type) for a in schema.kwarg_only)}")
    alpha = schema.argument("alpha")
    print(f"alpha:       default text {alpha.default!r}, value {alpha.default_value!r}")
    print(f"kind:        {schema.kind.value}; out arguments: {[a.name for a in schema.out_arguments]}")
    print(f"printed:     {schema}")
    print(f"lossless:    {str(schema) == text}")


def errors() -> None:
    _section("Errors point at the offending token")
    for bad in ("f(Tensr x) -> Tensor", "f(Tensor x, Tensor x) -> Tensor", "f(bool flag=1.5) -> ()"):
        try:
            parse_schema(bad)
        except SchemaParseError as error:
            print(error, end="\n\n")


def compatibility() -> None:
    _section("Backward compatibility of schema versions")
    old = parse_schema("ns::sum(Tensor self, int dim) -> Tensor")
    for new_text in (
        "ns::sum(Tensor self, int dim, bool keepdim=False) -> Tensor",
        "ns::sum(Tensor self, int dim, bool keepdim) -> Tensor",
    ):
        verdict = is_backward_compatible_with(old, parse_schema(new_text))
        print(f"{str(old):45} -> {new_text}: {'compatible' if verdict else 'breaks old callers'}")


def operators() -> None:
    _section("Operators from typed functions")

    @op("demo::scale")
    def scale(x: Tensor, factor: float = 2.0) -> Tensor:
        return Tensor.from_numpy(x.numpy() * factor)

    @op("demo::axpy")
    def axpy(x: Tensor, y: Tensor, *, alpha: float = 1.0) -> Tensor:
        return Tensor.from_numpy(alpha * x.numpy() + y.numpy())

    for f in (scale, axpy):
        print(f"inferred:    {f.schema}")
    x, y = tensor([1.0, 2.0]), tensor([10.0, 20.0])
    print(f"unboxed:     scale(x) = {scale(x)}; axpy(x, y, alpha=3.0) = {axpy(x, y, alpha=3.0)}")
    stack: list[Any] = [x, y, 3.0]
    axpy.call_boxed(stack)
    print(f"boxed:       axpy.call_boxed([x, y, 3.0]) leaves {stack}")
    try:
        axpy.call_boxed([x, "y"])
    except TypeError as error:
        print(f"boxed check: {error}")

    @scale.register_fake
    def _(x: Tensor, factor: float = 2.0) -> Tensor:
        from .tensor import empty_meta

        return empty_meta(x.shape, x.dtype)

    print(f"meta:        scale(meta tensor) = {scale(tensor([1.0, 2.0, 3.0], device='meta'))}")
    _section("The computed dispatch table of demo::scale")
    print(scale.dump())
    print(scale.dump_table())

    _section("A boxed fallback that counts every op call")
    counts: Counter[str] = Counter()

    def count(handle: OperatorHandle, keys: Any, stack: list[Any]) -> None:
        counts[handle.full_name] += 1
        handle.redispatch_boxed(keys, stack)  # continue below the Profiler key

    with Library("_", "IMPL") as lib, include_keys(DispatchKey.Profiler):
        lib.fallback(count, DispatchKey.Profiler)
        for _round in range(3):
            axpy(scale(x), y)
    print(f"calls seen:  {dict(counts)}")


_TOUR_YAML = """\
# A two-op library for the demo (namespace tour), with kernels in tour_kernels.py.
- func: scale(Tensor self, float factor=2.0) -> Tensor
  variants: function, method
  dispatch:
    CompositeImplicitAutograd: scale

- func: axpy(Tensor x, Tensor self, Scalar a=1) -> Tensor
  variants: function, method
  dispatch:
    CompositeImplicitAutograd: axpy
"""

_TOUR_KERNELS = """\
from typedops import Scalar, Tensor, core


def scale(self: Tensor, factor: float) -> Tensor:
    return core.mul(self, factor)


def axpy(x: Tensor, self: Tensor, a: Scalar) -> Tensor:
    return core.add(self, x, alpha=a)
"""


def codegen() -> None:
    import importlib
    import sys
    import tempfile
    from pathlib import Path

    from . import core
    from .codegen import generate, write_files
    from .vocabulary import Device, MemoryFormat

    _section("Code generation: an op yaml -> registration, typed API, methods, stubs")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "tour_ops.yaml").write_text(_TOUR_YAML)
        (root / "tour_kernels.py").write_text(_TOUR_KERNELS)
        sys.path.insert(0, tmp)
        try:
            files = write_files(generate(root / "tour_ops.yaml", root / "tour_generated", namespace="tour",
                                         kernels="tour_kernels", stubs=root / "stubs"))  # fmt: skip
            print("generated:   " + ", ".join(sorted(str(p.relative_to(root)) for p in files)))
            tour: Any = importlib.import_module("tour_generated")
            x, y = tensor([1.0, 2.0]), tensor([10.0, 20.0])
            m: Any = x  # tour's methods are not in the typed Tensor (its stubs are in the temp dir)
            print(f"tour.scale(x, 3.0)        = {tour.scale(x, 3.0)}")
            print(f"x.scale()                 = {m.scale()}")
            print(f"tour.axpy(x, y, 2)        = {tour.axpy(x, y, 2)}   (schema: axpy(Tensor x, Tensor self, ...))")
            w: Any = y
            print(f"y.axpy(x, a=2)            = {w.axpy(x, a=2)}   (self moves into place)")
            tour.LIBRARY.remove()
        finally:
            sys.path.remove(tmp)
            for name in [n for n in sys.modules if n.startswith(("tour_generated", "tour_kernels"))]:
                del sys.modules[name]

    _section("The bundled core library (typedops.core, generated from native_functions.yaml)")
    a, b = tensor([[1.0, 2.0], [3.0, 4.0]]), tensor([10.0, 20.0])
    print(f"core.add(a, b, alpha=2)   = {core.add(a, b, alpha=2)}")
    print(f"a.matmul(a).sum()         = {a.matmul(a).sum()!r}")
    n = core.ones([2, 3, 4, 5])
    cl = n.contiguous(memory_format=MemoryFormat.channels_last)
    print(f"contiguous strides        = {n.stride()};  channels_last strides = {cl.stride()}")
    meta = core.ones([64, 128], device=Device("meta"))
    out = core.matmul(meta, core.ones([128, 32], device=Device("meta")))
    print(f"Meta matmul               = shape {out.shape}, dtype {out.dtype.name}, no data: {out}")


def observing() -> None:
    from . import FakeTensorMode, core, profile, trace
    from .vocabulary import Device

    def mlp(x: Tensor, w: Tensor, b: Tensor) -> Tensor:
        return core.relu(core.add(core.matmul(x, w), b)).sum()

    _section("Tracing: a function as a Program of op calls")
    x, w, b = core.ones([4, 3]), core.ones([3, 2]), tensor([0.5, -9.0])
    program = trace(mlp, x, w, b)
    print(program)
    print(f"runs:        program(x, w, b) = {program(x, w, b)!r}; mlp(x, w, b) = {mlp(x, w, b)!r}")
    print(f"ops():       {program.ops()}  (the op list of a selective build)")

    _section("Profiling: every op call timed through one boxed fallback")
    with profile() as prof:
        for _round in range(20):
            program(x, w, b)
    print(prof.table(sort_by="self_time"))

    _section("Fake tensors: the same program, shapes without data")
    device = Device("privateuseone")
    with FakeTensorMode():
        h = core.matmul(core.ones([1024, 4096], device=device), core.ones([4096, 512], device=device))
        big = program(h, core.ones([512, 256], device=device), core.ones([256], device=device))
    print(f"hidden:      {h}")
    print(f"result:      {big}")


def transforms() -> None:
    from . import core, vmap
    from .func import grad

    def loss(w: Tensor, x: Tensor, y: Tensor) -> Tensor:
        err = core.sub(core.matmul(x, w), y)
        return core.mul(err, err).sum()

    _section("vmap and grad: per-sample gradients (typedops.func)")
    w = tensor([[1.0], [-1.0]])
    xs, ys = tensor([[1.0, 2.0], [3.0, 4.0], [0.5, 0.5]]), tensor([[0.0], [1.0], [2.0]])
    per_sample = vmap(grad(loss), in_dims=(None, 0, 0))(w, xs, ys)
    print(f"vmap(grad(loss), in_dims=(None, 0, 0)): shape {per_sample.shape}")
    for i in range(3):
        print(f"  sample {i}: {per_sample.select(0, i).tolist()} == grad(loss)(w, x[{i}], y[{i}]) = "
              f"{grad(loss)(w, xs.select(0, i), ys.select(0, i)).tolist()}")


def programs() -> None:
    import os
    import tempfile

    from . import core, load, trace

    _section("Programs: saved as data, loaded, run by the lite interpreter")
    w, b = tensor([[0.5, -1.0], [2.0, 0.25]]), tensor([0.5, 0.25])

    def affine(x: Tensor) -> Tensor:
        return core.relu(core.add(core.matmul(x, w), b))

    program = trace(affine, tensor([[1.0, 2.0]]))
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "affine.program")
        program.save(path)
        print(f"saved:       {os.path.getsize(path)} bytes (a zip of JSON and raw tensor data; no pickle)")
        x = tensor([[1.0, 2.0]])
        for flavor in ("dispatch", "static"):
            loaded = load(path, flavor=flavor)
            print(f"{flavor + ':':<12} {loaded.run(x).tolist()}  (eager: {program(x).tolist()})")


def main() -> None:
    schema_language()
    errors()
    compatibility()
    operators()
    codegen()
    observing()
    transforms()
    programs()


if __name__ == "__main__":
    main()
