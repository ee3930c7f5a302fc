"""Program format version 3 (issue 16): rows as arrays, every value numbered, a call one flat
array of integers (Note [The program file format] in typedops/tracing/_saving.py, Note
[Numbered values] in typedops/programs/_fast.py). What ``save`` writes, that it reads back
as versions 1 and 2 do, that the fast and the general reader read alike, and that damaged or
hostile version 3 files give ``ProgramFormatError`` naming the problem, in bounded memory.
(``tensors.bin`` is version 2's: test_programs_format_v2.py.)"""

from __future__ import annotations

import copy
import io
import json
import tracemalloc
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from typedops import Tensor, core, tensor
from typedops.programs import DEFAULT_LIMITS, LoadedProgram, ProgramFormatError, load, read_program
from typedops.programs import _load
from typedops.programs._archive import Archive
from typedops.programs._fast import fast_read
from tests.helpers import archive_contents, load_outcome, manifest_paths, with_manifest
from typedops.tracing import (FORMAT_VERSION, Call, InputRef, Program, ProgramError, ResultRef, TensorInput, trace,
                              write_program)  # fmt: skip
from typedops.tracing import OutputKind
from typedops.vocabulary import Device, ScalarType

_FUZZ = settings(max_examples=300, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
W = tensor([[0.5, -1.0, 2.0], [2.0, 0.25, -3.0]])
B = tensor([1.0, -2.0, 3.0])


def f(x: Tensor) -> Any:
    y = core.add(core.mm(x, W), B, alpha=2)
    return y, core.relu(core.add(y, B))


def g(x: Tensor, n: int) -> Any:
    """List arguments, a constant JSON has no literal for, a constant input, two results."""
    top = core.max(x, 1)
    return core.cat([x, core.add(x, float("inf"))], 0), core.sum(x, [0]), core.mul(top[1], n), top[0]


PROGRAM = trace(f, tensor([[1.0, 2.0]]))
OTHER = trace(g, tensor([[1.0, 2.0], [3.0, 4.0]]), 3)


def _saved(program: Program, version: int = FORMAT_VERSION) -> bytes:
    out = io.BytesIO()
    write_program(program, out, version)
    return out.getvalue()


GOOD = _saved(PROGRAM)



MANIFEST = json.loads(archive_contents(GOOD)["program.json"])


def _with(manifest: Any, data: bytes = GOOD) -> bytes:
    return with_manifest(data, json.dumps(manifest).encode())



def _fast(data: bytes) -> Any:
    archive = Archive(None, "the stream", DEFAULT_LIMITS, data)
    return fast_read(archive, archive.read("program.json", DEFAULT_LIMITS.manifest_bytes), DEFAULT_LIMITS)


def _general(data: bytes) -> LoadedProgram | str:
    """What the general reader reads (the fast path turned off), or its refusal."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_load, "fast_numbered", lambda *_: None)
        try:
            return read_program(data, "the stream")
        except ProgramFormatError as error:
            return f"{error.where}: {error.problem}"


def test_save_writes_version_4_with_numbered_values() -> None:
    """Version 4 is version 3 and ``wrapped`` (Note [Wrapped numbers in programs]): none here."""
    assert FORMAT_VERSION == 4 and list(archive_contents(GOOD)) == ["program.json", "tensors.bin"]
    assert list(MANIFEST) == ["format", "version", "ops", "inputs", "tensors", "constants", "calls", "outputs",
                              "output_kind", "wrapped"]  # fmt: skip
    assert MANIFEST["version"] == 4 and MANIFEST["wrapped"] == []
    assert MANIFEST["ops"][0] == ["core::mm", "", "core::mm(Tensor self, Tensor mat2) -> Tensor"]
    assert MANIFEST["inputs"] == [["tensor", "x", "float32", [1, 2], "cpu"]]
    assert MANIFEST["tensors"] == [["float32", [2, 3], "cpu", 0], ["float32", [3], "cpu", 64]]
    # 0: x, 1 and 2: the tensor constants, 3: the constant 2, 4: the constant 1, then the results.
    assert MANIFEST["constants"] == [2, 1]
    assert MANIFEST["calls"] == [[0, 1, 0, 1], [1, 1, 5, 2, 3], [1, 1, 6, 2, 4], [2, 1, 7]]
    assert MANIFEST["outputs"] == [6, 8] and MANIFEST["output_kind"] == "tuple"
    assert _saved(PROGRAM) == GOOD


def test_lists_constants_and_constant_inputs_are_numbered() -> None:
    manifest = json.loads(archive_contents(_saved(OTHER))["program.json"])
    assert manifest["inputs"][1] == ["constant", "n", 2]  # the constant 3, number 2 (after x, n and no tensors)
    assert manifest["constants"][0] == 3 and {"float": "inf"} in manifest["constants"]
    cat = next(call for call in manifest["calls"] if manifest["ops"][call[0]][0] == "core::cat")
    assert isinstance(cat[2], list) and cat[2][0] == 0  # [x, the add's result]


@pytest.mark.parametrize("program", [PROGRAM, OTHER], ids=["mlp", "lists"])
def test_every_version_reads_the_same_program(program: Program) -> None:
    read = [read_program(_saved(program, version), "the bytes").program for version in (1, 2, 3)]
    assert read[0] == read[1] == read[2] == program and str(read[2]) == str(program)
    general = _general(_saved(program))
    assert isinstance(general, LoadedProgram) and general.program == program
    x = tensor([[3.0, -1.0]])
    for flavor in ("dispatch", "static"):
        got = load(io.BytesIO(GOOD), flavor=flavor).run(x)
        assert [t.tolist() for t in got] == [t.tolist() for t in f(x)]


def test_the_fast_reader_reads_what_typedops_writes_and_leaves_lists_to_the_general_reader() -> None:
    fast = _fast(GOOD)
    general = _general(GOOD)
    assert fast is not None and isinstance(general, LoadedProgram)
    assert fast[0] == general.program == PROGRAM and fast[3] == list(general.call_ops)
    assert fast[1] == list(general.handles) and fast[2] == list(general.schemas)
    assert _fast(_saved(OTHER)) is None


def test_the_results_of_calls_of_several_results_are_numbered_in_order() -> None:
    program = trace(lambda x: core.max(x, 1)[1], tensor([[1.0, 2.0]]))
    manifest = json.loads(archive_contents(_saved(program))["program.json"])
    assert manifest["calls"][0][:2] == [0, 2] and manifest["outputs"] == [len(manifest["constants"]) + 2]
    assert read_program(_saved(program), "the bytes").program == program


def test_save_refuses_a_reference_the_program_does_not_have() -> None:
    call = Call("core::relu", "", "core::relu(Tensor self) -> Tensor", (ResultRef(0, 0),), 1)
    broken = Program((TensorInput("x", ScalarType.float32, (1,), Device("cpu")),), (call,), (InputRef(0),),
                     OutputKind.single)  # fmt: skip
    with pytest.raises(ProgramError, match=r"^cannot save the program: call %0 refers to result 0 of call 0, which the "
                                           r"program does not have before it$"):  # fmt: skip
        write_program(broken, io.BytesIO())


def _changed(change: Any) -> Any:
    manifest = copy.deepcopy(MANIFEST)
    change(manifest)
    return manifest


_VALUES = "(the inputs, the tensor constants, the constants, then each earlier call's results)"


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (lambda m: m.update(version=5), "version: format version 5 is newer than this typedops reads (versions 1 to 4)"),
        (lambda m: m.pop("constants"), "program.json: expected the keys format, version, ops, inputs, tensors, "
                                       "constants, calls, outputs, output_kind, wrapped, got calls, format, inputs, "
                                       "ops, output_kind, outputs, tensors, version, wrapped"),
        (lambda m: m.pop("wrapped"), "program.json: expected the keys format, version, ops, inputs, tensors, "
                                     "constants, calls, outputs, output_kind, wrapped, got calls, constants, format, "
                                     "inputs, ops, output_kind, outputs, tensors, version"),
        (lambda m: m.update(wrapped={}), "wrapped: expected a list of rows of the tensor table, got an object"),
        (lambda m: m.update(wrapped=[2]), "wrapped[0]: expected a row of the tensor table (0 to 1), got 2"),
        (lambda m: m.update(wrapped=[True]), "wrapped[0]: expected a row of the tensor table (0 to 1), got True"),
        (lambda m: m.update(wrapped=[0]), "wrapped[0]: tensor row 0 (float32[2, 3]) cannot be a wrapped number: one "
                                          "is a 0-dim bool, int64, float64 or complex128"),
        (lambda m: m["calls"][1].__setitem__(2, 6), f"calls[1][2]: refers to value 6, and 6 come before it {_VALUES}"),
        (lambda m: m["calls"][0].__setitem__(2, -1), "calls[0][2]: -1 is out of range: expected 0 to "),
        (lambda m: m["calls"][0].__setitem__(2, True), "calls[0][2]: expected a value: the number of an input, tensor "
                                                       "constant, constant or earlier result, or a list of values, got "
                                                       "the bool true"),
        (lambda m: m["calls"][0].__setitem__(2, 0.0), "calls[0][2]: expected a value: "),
        (lambda m: m["calls"][0].__setitem__(0, 9), "calls[0][0]: refers to op 9, and the file lists 3 op(s)"),
        (lambda m: m["calls"][0].__setitem__(0, "0"), "calls[0][0]: expected an integer, got the string '0'"),
        (lambda m: m["calls"][0].__setitem__(1, 2), "calls[0][1]: 2 result(s) for core::mm, whose schema returns 1"),
        (lambda m: m["calls"][0].__setitem__(1, -1), "calls[0][1]: -1 is out of range: expected 0 to 65536"),
        (lambda m: m["calls"][0].pop(), "calls[0]: 1 argument(s) for core::mm, whose schema takes 2"),
        (lambda m: m["calls"].__setitem__(0, [0]), "calls[0]: expected a list [op, outputs, argument, ...], got a list "
                                                   "of 1 item(s)"),
        (lambda m: m["calls"].__setitem__(0, {"op": 0}), "calls[0]: expected a list [op, outputs, argument, ...], got an "
                                                         "object"),
        (lambda m: m["outputs"].__setitem__(0, 9), f"outputs[0]: refers to value 9, and 9 come before it {_VALUES}"),
        (lambda m: m["ops"].__setitem__(0, ["core::mm", ""]), "ops[0]: expected a list [name, overload, schema], got a "
                                                              "list of 2 item(s)"),
        (lambda m: m["ops"][0].__setitem__(2, 7), "ops[0][2]: expected a string, got the number 7"),
        (lambda m: m["ops"][0].__setitem__(2, "core::mm(Tensor self) -> Tensor"),
         "calls[0]: 2 argument(s) for core::mm, whose schema takes 1"),
        (lambda m: m["ops"][0].__setitem__(2, "core::mm(Tensor self"), "ops[0][2]: the schema does not parse: "),
        (lambda m: m["inputs"][0].__setitem__(1, "lambda"), "inputs[0][1]: "),
        (lambda m: m["inputs"][0].__setitem__(0, "tensors"), "inputs[0][0]: expected one of tensor, constant, got "
                                                              "'tensors'"),
        (lambda m: m["inputs"].__setitem__(0, []), "inputs[0]: expected a list [kind, ...], got a list"),
        (lambda m: m["inputs"].append(["constant", "n", 0]), "inputs[1][2]: a constant input refers to an input"),
        (lambda m: m["inputs"].append(["constant", "n", 9]), f"inputs[1][2]: refers to value 9, and 6 come before it"),
        (lambda m: m["tensors"][1].__setitem__(3, 24), "tensors[1][3]: expected null or 64, got the number 24"),
        (lambda m: m["tensors"][0].__setitem__(0, "float128"), "tensors[0][0]: expected one of "),
        (lambda m: m["tensors"][0].__setitem__(1, [-2]), "tensors[0][1][0]: -2 is out of range"),
        (lambda m: m["tensors"][0].__setitem__(2, "gpu"), "tensors[0][2]: not a device: "),
        (lambda m: m["tensors"][0].pop(), "tensors[0]: expected a list [dtype, shape, device, offset], got a list of 3 "
                                          "item(s)"),
        (lambda m: m["constants"].__setitem__(0, {"dtype": "float128"}), "constants[0].dtype: expected one of "),
        (lambda m: m["constants"].__setitem__(0, [1]), "constants[0]: expected a constant, got a list"),
        (lambda m: m.update(output_kind="single"), "outputs: output kind 'single' with 2 output(s)"),
    ],
)  # fmt: skip
def test_damaged_version_3_manifests_are_refused_naming_the_problem(change: Any, problem: str) -> None:
    data = _with(_changed(change))
    assert load_outcome(data).startswith(problem)
    assert _fast(data) is None
    assert _general(data) == load_outcome(data)


def test_check_data_checks_the_crc_of_the_tensor_data() -> None:
    """Note [Which CRCs are checked]: a bit flipped inside the elements loads as a changed
    element, unless ``check_data`` asks for the CRC."""
    data = bytearray(GOOD)
    at = data.index(W.numpy().astype("<f4").tobytes())
    data[at] ^= 1
    loaded = load(io.BytesIO(bytes(data)))
    constant = loaded.program.calls[0].args[1]
    assert constant != PROGRAM.calls[0].args[1]
    for read in (lambda: load(io.BytesIO(bytes(data)), check_data=True),
                 lambda: read_program(bytes(data), "the stream", check_data=True)):  # fmt: skip
        with pytest.raises(ProgramFormatError, match="the entry 'tensors.bin' fails its CRC check"):
            read()
    manifest = bytearray(GOOD)
    manifest[manifest.index(b'"constants":[2,1]') + 13] ^= 1  # 2 -> 3: JSON still, and the manifest's CRC fails
    assert load_outcome(bytes(manifest)) == ": the entry 'program.json' fails its CRC check (the file is damaged)"


def test_every_truncation_is_refused() -> None:
    for length in range(len(GOOD)):
        with pytest.raises(ProgramFormatError):
            load(io.BytesIO(GOOD[:length]))


MANIFEST_BYTES = archive_contents(GOOD)["program.json"]


@_FUZZ
@given(st.lists(st.tuples(st.integers(0, len(MANIFEST_BYTES) - 1), st.integers(0, 7)), min_size=1, max_size=3))
def test_a_damaged_manifest_reads_the_same_or_goes_to_the_general_reader(flips: list[tuple[int, int]]) -> None:
    text = bytearray(MANIFEST_BYTES)
    for at, bit in flips:
        text[at] ^= 1 << bit
    data = with_manifest(GOOD, bytes(text))
    fast = _fast(data)
    general = _general(data)
    if fast is not None:
        assert isinstance(general, LoadedProgram) and fast[0] == general.program and fast[3] == list(general.call_ops)
    load_outcome(data)


@_FUZZ
@given(st.lists(st.tuples(st.integers(0, len(GOOD) - 1), st.integers(0, 7)), min_size=1, max_size=4))
def test_bit_flips_load_or_give_a_format_error(flips: list[tuple[int, int]]) -> None:
    data = bytearray(GOOD)
    for at, bit in flips:
        data[at] ^= 1 << bit
    load_outcome(bytes(data))



PATHS = manifest_paths(MANIFEST)[1:]
_json = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.sampled_from([-1, 0, 1, 5, 8, 9, 2**63, 2**64, 10**30]),
              st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=8),
              st.sampled_from(["tensor", "constant", "float32", "cpu", "core::mm", "tuple"])),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(
        st.sampled_from(["float", "dtype", "device", "complex", "input"]), inner, max_size=2)),
    max_leaves=10,
)  # fmt: skip


@_FUZZ
@given(st.lists(st.tuples(st.sampled_from(PATHS), _json), min_size=1, max_size=3))
@example([(("constants",), [None, None])])  # read by both readers, refused when compiled
def test_wrong_types_and_absurd_numbers_anywhere_give_a_format_error_and_the_readers_agree(
    changes: list[tuple[tuple[Any, ...], Any]],
) -> None:
    manifest = copy.deepcopy(MANIFEST)
    for path, replacement in changes:
        node = manifest
        try:
            for key in path[:-1]:
                node = node[key]
            node[path[-1]] = replacement
        except (KeyError, IndexError, TypeError):
            continue  # an earlier change removed the place
    data = _with(manifest)
    outcome = load_outcome(data)
    fast = _fast(data)
    if fast is not None:
        # What the fast reader reads, the general one reads the same; a program both read
        # may still be refused when it is compiled (a constant that does not fit its
        # argument), and then with the same error as without the fast path.
        general = _general(data)
        assert isinstance(general, LoadedProgram) and fast[0] == general.program
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(_load, "fast_numbered", lambda *_: None)
            assert outcome == load_outcome(data)


def test_calls_declaring_many_results_are_refused_in_bounded_memory() -> None:
    # A row of a few bytes may declare 65,536 results: each call is checked against its
    # schema before its results are numbered (20 such rows used to number 1.3 million).
    rows = _changed(lambda m: m.__setitem__("calls", [[0, 65536, 0, 0]] * 20 + m["calls"]))
    tracemalloc.start()
    try:
        outcome = load_outcome(_with(rows))
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    assert outcome == (
        "calls[0][1]: 65536 result(s) for core::mm, whose schema returns 1: core::mm(Tensor self, Tensor mat2) -> Tensor")
    assert peak < 16 * 2**20, peak


def test_deep_lists_are_refused_in_bounded_memory() -> None:
    deep: Any = 0
    for _ in range(40):
        deep = [deep]
    assert load_outcome(_with(_changed(lambda m: m["outputs"].__setitem__(0, deep)))) == (
        "outputs[0]" + "[0]" * 32 + ": values nest more than 32 levels deep")
    wide = _with(_changed(lambda m: m["outputs"].__setitem__(0, [[0] * 300] * 300)))  # 90,000 numbers, 180 KB of JSON
    tracemalloc.start()
    try:
        read = read_program(wide, "the stream")
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    assert len(read.program.outputs) == 2 and peak < 16 * 2**20, peak


# -- version 4: wrapped numbers (Note [Wrapped numbers in programs] in typedops/tracing/_values.py) --
def scaled(a: Tensor) -> Tensor:
    return a * 2.5 + 1


WRAPPED = trace(scaled, tensor([1, 2]))


def test_a_wrapped_number_is_saved_in_wrapped_and_loads_as_one() -> None:
    """An int64 tensor times 2.5 is float32 in the function, the program and the loaded
    program in both flavors, read by either reader."""
    assert str(WRAPPED).splitlines()[1:3] == ["  %0: Tensor = core::mul.Tensor(a, wrapped(2.5))",
                                              "  %1: Tensor = core::add.Tensor(%0, wrapped(1), alpha=1)"]  # fmt: skip
    data = _saved(WRAPPED)
    manifest = json.loads(archive_contents(data)["program.json"])
    assert manifest["tensors"] == [["float64", [], "cpu", 0], ["int64", [], "cpu", 64]] and manifest["wrapped"] == [0, 1]
    fast, general = _fast(data), _general(data)
    assert fast is not None and isinstance(general, LoadedProgram)
    assert fast[0] == general.program == WRAPPED
    x = tensor([1, 2])
    assert scaled(x).dtype is WRAPPED(x).dtype is ScalarType.float32
    for flavor in ("dispatch", "static"):
        got = load(io.BytesIO(data), flavor=flavor).run(x)
        assert got.dtype is ScalarType.float32 and got.tolist() == [3.5, 6.0]


def test_an_earlier_version_cannot_hold_a_wrapped_number_but_still_loads_without_one() -> None:
    for version in (1, 2, 3):
        with pytest.raises(ProgramError, match=rf"^cannot save the program: format version {version} cannot hold a "
                                               r"wrapped number \(a Python number an op took as a tensor\); write "
                                               r"version 4$"):  # fmt: skip
            write_program(WRAPPED, io.BytesIO(), version)
        assert read_program(_saved(PROGRAM, version), "the bytes").program == PROGRAM
    three = json.loads(archive_contents(_saved(PROGRAM, 3))["program.json"])
    assert three["version"] == 3 and "wrapped" not in three
    assert _fast(_saved(PROGRAM, 3)) is not None


def test_a_constant_with_no_elements_has_an_offset_and_a_0_byte_tensors_bin() -> None:
    """docs/programs.md: null offsets are for constants with no data (meta); zero elements is data of 0 bytes."""
    program = trace(lambda a: core.cat([a, tensor([])]), tensor([1.0]))
    data = _saved(program)
    contents = archive_contents(data)
    assert json.loads(contents["program.json"])["tensors"] == [["float32", [0], "cpu", 0]]
    assert contents["tensors.bin"] == b""
    assert read_program(data, "the bytes").program == program
