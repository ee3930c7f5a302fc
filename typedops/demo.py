"""The end-to-end demo (``make demo``): a tour of what typedops does today.

Run it with ``python -m typedops.demo``; every section prints what it shows.
"""

from __future__ import annotations

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


def main() -> None:
    schema_language()
    errors()
    compatibility()


if __name__ == "__main__":
    main()
