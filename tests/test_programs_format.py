"""The program file format (issue 16): Program.save, typedops.load, the round trip and the
errors a bad file gives (tests/test_programs_fuzz.py throws damaged and hostile files at it)."""

from __future__ import annotations

import io
from dataclasses import replace
import itertools
import json
import math
import re
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import typedops
from typedops import Library, Tensor, core, tensor
from typedops.programs import ProgramFormatError, load, read_program
from typedops.tracing import (
    Call,
    Constant,
    ConstantInput,
    InputRef,
    ListOf,
    OutputKind,
    Program,
    ProgramError,
    ResultRef,
    TensorConstant,
    TensorInput,
    trace,
    write_program,
)
from typedops.vocabulary import ArgumentValueError, Device, Layout, MemoryFormat, ScalarType

_fresh = itertools.count()


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, Tensor):
        return (
            isinstance(b, Tensor) and a.dtype is b.dtype and a.shape == b.shape
            and bool(np.array_equal(np.asarray(a.tolist()), np.asarray(b.tolist()), equal_nan=True))
        )  # fmt: skip
    if isinstance(a, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return bool(a == b)


def _saved(program: Program) -> bytes:
    out = io.BytesIO()
    write_program(program, out, version=1)  # these tests pin how version 1 files read: test_programs_format_v2.py has 2
    return out.getvalue()


def _loaded(data: bytes) -> Program:
    return load(io.BytesIO(data)).program


def f(x: Tensor, y: Tensor, n: int) -> Any:
    z = core.mul(x, y)
    for _ in range(n):
        z = core.add(z, x, alpha=2)
    return z.sum(), core.zeros([2]), core.cat([x, tensor([1.5, -0.0])]), core.max(x.reshape([1, 2]), 1)[1]


X, Y = tensor([1.0, 2.0]), tensor([3.0, 4.0])


def test_a_saved_program_loads_equal_and_runs_the_same(tmp_path: Path) -> None:
    program = trace(f, X, Y, 2)
    path = tmp_path / "f.program"
    program.save(path)
    loaded = typedops.load(path)
    assert loaded.program == program
    assert str(loaded) == str(program)
    a, b = tensor([5.0, -1.0]), tensor([0.5, 2.0])
    assert _same(loaded.run(a, b, 2), f(a, b, 2))
    loaded.program.check()
    static = typedops.load(str(path), flavor="static")
    assert (static.program, static.flavor) == (program, "static")
    assert _same(static.run(a, b, 2), f(a, b, 2))


def test_saving_is_deterministic_and_data_only() -> None:
    program = trace(f, X, Y, 1)
    data = _saved(program)
    assert _saved(program) == data
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        assert archive.namelist() == ["program.json", "tensors/0.npy"]
        manifest = json.loads(archive.read("program.json"))
        assert archive.getinfo("tensors/0.npy").compress_type == zipfile.ZIP_STORED
    assert manifest["format"] == "typedops.program" and manifest["version"] == 1
    assert manifest["ops"][1] == {
        "name": "core::add", "overload": "Tensor", "schema": str(typedops.ops.core.add.Tensor.schema)
    }  # fmt: skip
    assert manifest["calls"][1] == {"op": 1, "args": [{"result": [0, 0]}, {"input": 0}, {"const": 2}], "outputs": 1}
    assert manifest["inputs"][2] == {"kind": "constant", "name": "n", "value": {"const": 1}}
    assert manifest["tensors"] == [{"dtype": "float32", "shape": [2], "device": "cpu", "data": "tensors/0.npy"}]
    assert manifest["output_kind"] == "tuple"


def test_every_kind_of_constant_round_trips() -> None:
    constants: list[Any] = [None, True, False, 0, -(2**70), 2.5, -0.0, math.inf, -math.inf, complex(1.5, -math.inf),
                            "", "a\u00e9\ud800", ScalarType.bfloat16, Layout.sparse_coo, MemoryFormat.channels_last,
                            Device("cpu"), Device.parse("privateuseone:3")]  # fmt: skip
    meta = TensorConstant(ScalarType.int64, (2, 0, 3), Device("meta"), None)
    ints = TensorConstant(ScalarType.int16, (), Device("cpu"), b"\xf9\xff")  # -7, little-endian
    program = Program(
        (TensorInput("x", ScalarType.float32, (2,), Device("cpu")),
         ConstantInput("c", ListOf((Constant(1), ListOf((Constant(2.0), Constant("z"))))))),
        (Call("core::neg", "", str(typedops.ops.core.neg.default.schema), (InputRef(0),), 1),),
        (*[Constant(c) for c in constants], meta, ints, ResultRef(0), ListOf(())),
        OutputKind.list,
    )  # fmt: skip
    loaded = _loaded(_saved(program))
    assert loaded == program
    assert [type(v.value) for v in loaded.outputs[: len(constants)] if isinstance(v, Constant)] == [
        type(c) for c in constants
    ]
    nan = _loaded(_saved(Program((), (), (Constant(math.nan), Constant(complex(0, math.nan))), OutputKind.tuple)))
    assert str(nan) == "program():\n  return (nan, nanj)"


def test_a_tensor_constant_used_twice_is_stored_once() -> None:
    weight = tensor([[1.0, 2.0], [3.0, 4.0]])
    program = trace(lambda a: core.add(core.mul(a, weight), weight), tensor([[1.0, 1.0], [1.0, 1.0]]))
    with zipfile.ZipFile(io.BytesIO(_saved(program))) as archive:
        assert archive.namelist() == ["program.json", "tensors/0.npy"]  # the recorder made one constant
    loaded = _loaded(_saved(program))
    assert loaded == program
    assert loaded.calls[0].args[1] is loaded.calls[1].args[1]
    read = read_program(_saved(program), "here")  # the file's bytes, as load reads a small file
    constant = read.program.calls[0].args[1]
    assert isinstance(constant, TensorConstant) and constant is read.program.calls[1].args[1]
    elements = constant.elements()
    assert elements.tolist() == [[1.0, 2.0], [3.0, 4.0]] and not elements.flags.writeable


_UNARY = ["neg", "exp", "abs", "tanh"]
_BINARY = ["add", "mul", "maximum", "sub"]
_floats = st.floats(width=32, allow_nan=False)


@st.composite
def _steps(draw: st.DrawFn) -> list[tuple[str, int, Any]]:
    kinds = st.sampled_from(_UNARY + _BINARY + ["scaled", "constant", "sum", "max", "cat"])
    steps = draw(st.lists(st.tuples(kinds, st.integers(0, 7)), min_size=1, max_size=8))
    out: list[tuple[str, int, Any]] = []
    for name, pick in steps:
        extra: Any = None
        if name == "scaled":
            extra = draw(st.one_of(st.integers(-3, 3), _floats))
        elif name == "constant":
            extra = draw(st.lists(_floats, min_size=2, max_size=2))
        out.append((name, pick, extra))
    return out


@settings(max_examples=30, deadline=None)
@given(_steps(), st.sampled_from(["single", "tuple", "list"]))
def test_the_round_trip_of_traced_programs(steps: list[tuple[str, int, Any]], shape: str) -> None:
    def chain(a: Tensor, b: Tensor) -> Any:
        values = [a, b]
        for name, pick, extra in steps:
            operand = values[pick % len(values)]
            if name in _UNARY:
                values.append(getattr(core, name)(operand))
            elif name in _BINARY:
                values.append(getattr(core, name)(values[-1], operand))
            elif name == "scaled":
                values.append(core.add(values[-1], operand, alpha=extra))
            elif name == "constant":
                values.append(core.mul(operand, tensor(extra)))
            elif name == "sum":
                values.append(core.add(operand, operand.sum()))
            elif name == "max":
                values.append(core.max(operand.reshape([1, 2]), 1)[0].reshape([1]).expand([2]))
            else:
                values.append(core.slice(core.cat([operand, values[-1]]), 0, 1, 3))
        if shape == "single":
            return values[-1]
        return tuple(values[-2:]) if shape == "tuple" else [values[-1], 3]

    program = trace(chain, tensor([0.5, -1.0]), tensor([2.0, 0.25]))
    loaded = _loaded(_saved(program))
    assert loaded == program
    assert str(loaded) == str(program)
    a, b = tensor([1.5, 0.0]), tensor([-0.5, 3.0])
    assert _same(loaded(a, b), program(a, b))
    assert _same(loaded(a, b), chain(a, b))


# -- what load refuses ---------------------------------------------------------------------------------
def _error(data: bytes) -> ProgramFormatError:
    with pytest.raises(ProgramFormatError) as info:
        _loaded(data)
    return info.value


def test_the_error_is_a_typedops_error_and_a_value_error() -> None:
    assert ProgramFormatError.__mro__[1:3] == (typedops.TypedopsError, ValueError)


def _rewrite(data: bytes, change: Any, entries: dict[str, bytes] | None = None) -> bytes:
    """``data`` with its manifest passed through ``change`` and entries replaced or added."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        contents = {name: archive.read(name) for name in archive.namelist()}
    manifest = json.loads(contents["program.json"])
    change(manifest)
    contents["program.json"] = json.dumps(manifest).encode()
    contents.update(entries or {})
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name, content in contents.items():
            archive.writestr(name, content)
    return out.getvalue()


GOOD = _saved(trace(f, X, Y, 1))
PREFIX = "the stream is not a typedops program that can be loaded: "


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda m: m.update(version=5), "version: format version 5 is newer than this typedops reads (versions 1 to 4); "
                                        "load it with the typedops that saved it, or a newer one"),
        (lambda m: m.update(format="zip"), "format: the format is the string 'zip', not 'typedops.program'"),
        (lambda m: m.update(version=True), "version: expected an integer, got the bool true"),
        (lambda m: m.update(extra=1), "program.json: expected the keys format, version, ops, inputs, calls, outputs, "
                                      "output_kind, tensors, got calls, extra, format, inputs, ops, output_kind, outputs, "
                                      "tensors, version"),
        (lambda m: m["calls"][1]["args"][0].update(result=[1, 0]), "calls[1].args[0].result: refers to a result of call 1, "
                                                                    "which is not an earlier call"),
        (lambda m: m["calls"][1]["args"][0].update(result=[0, 1]), "calls[1].args[0].result: refers to result 1 of call 0, "
                                                                    "which has 1 result(s)"),
        (lambda m: m["calls"][0]["args"][0].update(input=9), "calls[0].args[0].input: refers to input 9, and the program "
                                                             "has 3 input(s)"),
        (lambda m: m["calls"][0].update(op=-1), "calls[0].op: -1 is out of range: expected 0 to 9223372036854775807"),
        (lambda m: m["calls"][0].update(op=99), "calls[0].op: refers to op 99, and the file lists 7 op(s)"),
        (lambda m: m["calls"][0].update(outputs=10**20), "calls[0].outputs: 100000000000000000000 is out of range: "
                                                         "expected 0 to 65536"),
        (lambda m: m["calls"][0].update(outputs=2), "calls[0].outputs: 2 result(s) for core::mul.Tensor, whose schema "
                                                    "returns 1: core::mul.Tensor(Tensor self, Tensor other) -> Tensor"),
        (lambda m: m["calls"][0]["args"].pop(), "calls[0].args: 1 argument(s) for core::mul.Tensor, whose schema takes 2: "
                                                "core::mul.Tensor(Tensor self, Tensor other) -> Tensor"),
        (lambda m: m["calls"][0]["args"].__setitem__(0, {"tensor": 5}), "calls[0].args[0].tensor: refers to tensor "
                                                                         "constant 5, and the file has 1"),
        (lambda m: m["calls"][0]["args"].__setitem__(0, {"what": 5}), "calls[0].args[0]: expected one of input, result, "
                                                                       "tensor, list or const, got 'what'"),
        (lambda m: m["calls"][1]["args"].__setitem__(2, {"const": {"dtype": "float128"}}), "calls[1].args[2].const.dtype: "
         "expected one of uint8, int8, int16, int32, int64, float16, float32, float64, complex64, complex128, bool, "
         "bfloat16, got 'float128'"),
        (lambda m: m["calls"][1]["args"].__setitem__(2, {"const": {"device": "gpu"}}), "calls[1].args[2].const.device: "
         "not a device: unknown device type 'gpu'; typedops has cpu, meta, privateuseone"),
        (lambda m: m["calls"][1]["args"].__setitem__(2, {"const": [1]}), "calls[1].args[2].const: expected a constant, "
                                                                          "got a list"),
        (lambda m: m["ops"][0].update(name="myns::gone"), "ops[0]: the program calls myns::gone.Tensor, which is not "
         "registered: import (or define) the library that registers it before loading the program"),
        (lambda m: m["ops"][0].update(schema="core::mul.Tensor(Tensor self) ->"), "ops[0].schema: the schema does not "
                                                                                  "parse: "),
        (lambda m: m["ops"][0].update(schema="core::neg(Tensor self) -> Tensor"), "ops[0].schema: the schema "
         "'core::neg(Tensor self) -> Tensor' is not one of core::mul.Tensor"),
        (lambda m: m["inputs"][1].update(name="x"), "inputs[1].name: a second input named 'x'"),
        (lambda m: m["inputs"][0].update(name="x) -> evil\n  %9: Tensor = os::system('rm')\n#"), "inputs[0].name: "
         "\"x) -> evil\\n  %9: Tensor = os::system('rm')\\n#\" is not an input name: expected a Python identifier that "
         "is not a keyword, of at most 256 characters"),
        (lambda m: m["inputs"][0].update(name="lambda"), "inputs[0].name: 'lambda' is not an input name"),
        (lambda m: m["inputs"][0].update(name=""), "inputs[0].name: '' is not an input name"),
        (lambda m: m["inputs"][0].update(name="x" * 257), "inputs[0].name: 'xxxxxxxx"),
        (lambda m: m["inputs"][0].update(name="x" * 256), None),  # fine: at the cap
        (lambda m: m["inputs"][0].update(kind="image"), "inputs[0].kind: expected one of tensor, constant, got 'image'"),
        (lambda m: m["inputs"][0].update(shape=[-1]), "inputs[0].shape[0]: -1 is out of range: expected 0 to "
                                                      "9223372036854775807"),
        (lambda m: m["inputs"][0].update(shape=[1] * 65), "inputs[0].shape: 65 items, more than the limit of 64"),
        (lambda m: m["inputs"][2].update(value={"result": [0, 0]}), "inputs[2].value.result: a constant input refers to "
                                                                     "a call's result"),
        (lambda m: m["inputs"][2].update(value={"input": 2}), "inputs[2].value.input: a constant input refers to an "
                                                               "input (a constant holds no tensor)"),
        (lambda m: m["inputs"][2].update(value={"list": [{"input": 0}]}), "inputs[2].value.list[0].input: a constant "
                                                                          "input refers to an input"),
        (lambda m: m.update(output_kind="single"), "outputs: output kind 'single' with 4 output(s) (single takes 1, none "
                                                   "takes 0)"),
        (lambda m: m["tensors"][0].update(data="../../etc/passwd"), "tensors[0].data: expected null or 'tensors/0.npy', "
                                                                     "got the string '../../etc/passwd'"),
        (lambda m: m["tensors"][0].update(shape=[3]), "tensors/0.npy: its shape [2] does not match the shape [3] the "
                                                      "manifest declares"),
        (lambda m: m["tensors"][0].update(dtype="float64"), "tensors/0.npy: it holds <f4, not the float64 "
                                                            "(little-endian) the manifest declares"),
        (lambda m: m["tensors"][0].update(dtype="bfloat16"), "tensors[0].dtype: dtype bfloat16 has no storage for "
                                                             "elements"),
        (lambda m: m["tensors"][0].update(shape=[2**40, 2**40]), "tensors[0].shape: a tensor of shape "
         "[1099511627776, 1099511627776] holds 1208925819614629174706176 elements, more than the limit of 536870912"),
        (lambda m: m["outputs"].__setitem__(0, {"list": [{"list": [{"list": []}]}] * 2}), None),  # fine: shallow
    ],
)  # fmt: skip
def test_a_bad_manifest_names_the_place_and_the_problem(change: Any, message: str | None) -> None:
    data = _rewrite(GOOD, change)
    if message is None:
        _loaded(data)
        return
    error = _error(data)
    assert str(error).startswith(PREFIX + message), str(error)
    assert message.startswith(error.where + ": ")


def test_ints_outside_int64_are_refused_at_load() -> None:
    alpha = _error(_rewrite(GOOD, lambda m: m["calls"][1]["args"].__setitem__(2, {"const": 10**400})))
    assert str(alpha) == (
        "cannot load the program: call %1 (core::add.Tensor), argument 'alpha': expected Scalar, got an int of 1329 "
        "bits, outside int64's range (-2**63 to 2**63 - 1)"
    )
    program = trace(lambda a: core.add(a, core.zeros([2])), X)
    size = _error(_rewrite(_saved(program), lambda m: m["calls"][0]["args"][0]["list"].__setitem__(0, {"const": 2**64})))
    assert str(size) == (
        "cannot load the program: call %0 (core::zeros), argument 'size': element 0: expected SymInt, got "
        "18446744073709551616, outside int64's range (-2**63 to 2**63 - 1)"
    )


def test_a_newer_file_is_named_as_such_whatever_else_changed() -> None:
    newer = {"format": "typedops.program", "version": 7, "instructions": []}
    error = _error(_rewrite(GOOD, lambda m: (m.clear(), m.update(newer))))
    assert error.where == "version" and "format version 7 is newer" in error.problem


def test_values_nest_to_a_limit() -> None:
    deep: dict[str, Any] = {"const": 1}
    for _ in range(40):
        deep = {"list": [deep]}
    error = _error(_rewrite(GOOD, lambda m: m["outputs"].__setitem__(0, deep)))
    assert error.problem == "values nest more than 32 levels deep"
    error = _error(_rewrite(GOOD, lambda m: None, {"program.json": b"[" * 100_000 + b"]" * 100_000}))
    assert error.problem == "program.json nests too deeply to parse"


def _npy(array: Any) -> bytes:
    out = io.BytesIO()
    np.lib.format.write_array(out, array, allow_pickle=True)
    return out.getvalue()


SHORT = _npy(np.zeros(1, np.float32)).replace(b"(1,)", b"(2,)")  # the header promises 2 elements, 1 follows


@pytest.mark.parametrize(
    ("entries", "message"),
    [
        ({"program.json": b'{"format": NaN}'}, "program.json: program.json holds NaN, which JSON does not have"),
        ({"program.json": b'{"format": 1, "format": 2}'}, "program.json: the key 'format' appears twice"),
        ({"program.json": b"\xff"}, "program.json is not UTF-8 JSON ("),
        ({"program.json": b"[]"}, "program.json: expected an object, got a list"),
        ({"notes.txt": b"hi"}, "unexpected entry 'notes.txt': a program holds program.json and the tensor data it "
                               "names (tensors.bin; tensors/<k>.npy in version 1)"),
        ({"tensors/0.npy": SHORT}, "tensors/0.npy: it holds 4 bytes of elements, and its dtype and shape take 8"),
        ({"tensors/0.npy": b"PK\x03\x04 not an array"}, "tensors/0.npy: not a .npy array (ValueError: "),
    ],
)  # fmt: skip
def test_bad_entries_are_named(entries: dict[str, bytes], message: str) -> None:
    error = _error(_rewrite(GOOD, lambda m: None, entries))
    assert str(error).startswith(PREFIX + message), str(error)


def test_a_number_JSON_reads_as_infinity_is_refused() -> None:
    text = _rewrite(GOOD, lambda m: None)
    with zipfile.ZipFile(io.BytesIO(text)) as archive:
        manifest = archive.read("program.json").replace(b'{"const": 1}', b'{"const": 1e400}')
    error = _error(_rewrite(GOOD, lambda m: None, {"program.json": manifest}))
    assert str(error) == PREFIX + (
        'inputs[2].value.const: expected a finite number or {"float": "nan" | "inf" | "-inf"}, got the number inf'
    )


def test_a_pickled_object_array_is_refused_unread() -> None:
    hostile = _npy(np.array([print, 1], dtype=object))
    error = _error(_rewrite(GOOD, lambda m: None, {"tensors/0.npy": hostile}))
    assert error.problem == (
        "it holds Python objects (dtype |O): a program's tensors hold numbers, and loading never unpickles"
    )
    fortran = _npy(np.asfortranarray(np.ones((2, 2), dtype=np.float32)))
    error = _error(_rewrite(GOOD, lambda m: m["tensors"][0].update(shape=[2, 2]), {"tensors/0.npy": fortran}))
    assert error.problem == "it is in Fortran order; programs store C order"


def test_the_file_itself() -> None:
    assert str(_error(b"")) == PREFIX + "it has no zip directory at its end (not a zip archive, or truncated)"
    assert _error(GOOD[: len(GOOD) - 10]).problem == "its zip directory is cut short (the file is truncated)"
    assert _error(GOOD[:-40]).problem.startswith("it has no zip directory")
    with pytest.raises(FileNotFoundError):
        typedops.load("/nonexistent/file.program")


def test_flavors() -> None:
    with pytest.raises(ArgumentValueError, match=re.escape("flavor must be 'dispatch' or 'static', got 'lite'")):
        typedops.load(io.BytesIO(GOOD), flavor="lite")  # type: ignore[arg-type]


def test_an_op_of_a_library_loaded_later_or_gone() -> None:
    ns = f"format_test_{next(_fresh)}"
    with Library(ns, "DEF") as lib:
        lib.define("twice(Tensor x, int n=2) -> Tensor")
        lib.impl("twice", lambda x, n: core.mul(x, n), "CompositeExplicitAutograd", check=False)
        program = trace(lambda a: getattr(typedops.ops, ns).twice(a), X)
        data = _saved(program)
        assert _loaded(data)(tensor([1.0, 3.0])).tolist() == [2.0, 6.0]
        loaded = read_program(io.BytesIO(data), "here")
        assert [h.name for h in loaded.handles] == [f"{ns}::twice"]
        assert loaded.call_ops == (0,) and loaded.resolved() == [(loaded.handles[0], loaded.schemas[0])]
        assert loaded.schemas[0] is loaded.handles[0].schema  # the same text: not parsed again
    error = _error(data)
    assert error.where == "ops[0]" and error.problem.startswith(f"the program calls {ns}::twice, which is not registered")
    with Library(ns, "DEF") as lib:  # a trailing defaulted argument more: the recorded schema is parsed
        lib.define("twice(Tensor x, int n=2, int k=1) -> Tensor")
        loaded = read_program(io.BytesIO(data), "here")
        assert str(loaded.schemas[0]) == program.calls[0].schema != str(loaded.handles[0].schema)


def test_saving_refuses_what_the_format_cannot_hold() -> None:
    bad = Program((), (), (Constant(np.float32(1.0)),), OutputKind.single)
    with pytest.raises(ProgramError, match=re.escape("cannot save the program: a constant of type float32 is not one")):
        _saved(bad)
    short = Program((), (), (TensorConstant(ScalarType.float32, (3,), Device("cpu"), b"\0" * 5),), OutputKind.single)
    with pytest.raises(ProgramError, match=re.escape("a tensor constant holds 5 byte(s) for shape [3] of float32, "
                                                     "whose elements take 12")):  # fmt: skip
        _saved(short)
    bf16 = Program((), (), (TensorConstant(ScalarType.bfloat16, (1,), Device("cpu"), b"\x80\x3f"),), OutputKind.single)
    with pytest.raises(ProgramError, match=re.escape("dtype bfloat16 has elements, and bfloat16 has no storage")):
        _saved(bf16)


@pytest.mark.parametrize("names", [["lambda"], ["x y"], [""], ["x" * 257], ["é" * 3, "x", "x"], ["x", "y", "x"]])
def test_saving_refuses_the_input_names_loading_refuses_in_its_words(names: list[str]) -> None:
    """A Program made by hand may name its inputs anything; save refuses what load would."""
    program = trace(f, X, Y, 1)
    inputs = tuple(replace(spec, name=name) for spec, name in zip(program.inputs, names + ["z"] * 3))
    bad = replace(program, inputs=inputs)
    with pytest.raises(ProgramError) as saving:
        _saved(bad)
    index = next(i for i, name in enumerate(names) if name not in ("x", "y", "é" * 3) or names.index(name) != i)
    loading = _error(_rewrite(GOOD, lambda m: [row.update(name=spec.name) for row, spec in zip(m["inputs"], inputs)]))
    assert loading.where == f"inputs[{index}].name"
    assert str(saving.value) == f"cannot save the program: inputs[{index}].name: {loading.problem}"


def test_strings_from_the_file_are_shortened_in_messages() -> None:
    error = _error(_rewrite(GOOD, lambda m: m["ops"][0].update(name="x" * 100_000)))
    assert error.problem.startswith("the program calls " + "x" * 117 + "..., which is not registered")
    error = _error(_rewrite(GOOD, lambda m: m["inputs"][0].update(kind="k" * 100_000)))
    assert len(str(error)) < 300


def test_entries_are_stored_and_a_deflated_file_loads_too() -> None:
    with zipfile.ZipFile(io.BytesIO(GOOD)) as archive:
        assert {info.compress_type for info in archive.infolist()} == {zipfile.ZIP_STORED}
        contents = {name: archive.read(name) for name in archive.namelist()}
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, content in contents.items():
            archive.writestr(name, content)
    assert _loaded(out.getvalue()) == _loaded(GOOD)
