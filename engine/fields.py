"""A state's fields, declared once: clone, digest and construction derive from the table.

A game's state lists its fields in one :class:`FieldTable`. Each :class:`Field`
says how a clone copies it and what it contributes to the digest (or nothing),
as small expression templates in which ``{}`` stands for the field's value.
From that table the module generates, like :mod:`dataclasses` does, plain
Python functions with one line per field, so a clone costs what a hand-written
one would::

    FIELDS = FieldTable([
        Field("seed"),                             # shared, digested as it is
        Field("deck", copy="{}[:]"),               # copied, digested as it is
        Field("cap", digest=None),                 # shared, not digested
    ])
    FIELDS.copy(state)       # a new object of the same class, every field copied
    FIELDS.digest_parts(state)   # the tuple whose repr a digest hashes
    FIELDS.build(cls, values)    # a new object from exactly the declared fields

Digest parts are concatenated in declaration order; a template may yield
several parts (``"list({}[0]), list({}[1])"``), which keeps a digest
byte-identical when a field changes shape.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Field:
    """One field of a state.

    Args:
        name: the attribute name.
        copy: expression template for a clone's value (``{}``: the source's value);
            the default shares the value (immutable, or never mutated in place).
        digest: expression template of its digest part(s), or None: not digested
            (derived from other fields, or the generator, which digests apart).
    """

    name: str
    copy: str = "{}"
    digest: str | None = "{}"


class FieldTable:
    """The ordered fields of one state class, and the functions derived from them.

    Args:
        fields: every field, in digest order.
        namespace: names the templates use (e.g. ``{"deque": deque}``).

    Raises:
        ValueError: a name is declared twice.
    """

    def __init__(self, fields: Sequence[Field], namespace: Mapping[str, Any] | None = None
                 ) -> None:
        names = [f.name for f in fields]
        if len(set(names)) != len(names):
            raise ValueError(f"a field is declared twice: {names}")
        self.fields = tuple(fields)
        self.names = tuple(names)
        env: dict[str, Any] = dict(namespace or {})
        copy_lines = [f"    other.{f.name} = {f.copy.replace('{}', 'self.' + f.name)}"
                      for f in self.fields]
        digest_parts = [f.digest.replace("{}", "self." + f.name)
                        for f in self.fields if f.digest is not None]
        source = (
            "def copy(self):\n"
            "    other = object.__new__(type(self))\n"
            + "\n".join(copy_lines) + "\n"
            "    return other\n"
            "def digest_parts(self):\n"
            f"    return ({', '.join(digest_parts)},)\n"
        )
        exec(compile(source, f"<fields {', '.join(names[:3])}...>", "exec"), env)  # noqa: S102
        self.copy = env["copy"]
        self.digest_parts = env["digest_parts"]

    @property
    def slots(self) -> tuple[str, ...]:
        """The field names, for a class's ``__slots__``."""
        return self.names

    def build(self, cls: type[T], values: Mapping[str, Any]) -> T:
        """A new ``cls`` object (``__init__`` not run) with exactly the declared fields.

        Raises:
            ValueError: a declared field is missing from ``values``, or an unknown one given.
        """
        missing = [n for n in self.names if n not in values]
        unknown = sorted(set(values) - set(self.names))
        if missing or unknown:
            raise ValueError(f"{cls.__name__} fields: missing {missing}, unknown {unknown}")
        obj = object.__new__(cls)
        for name in self.names:
            setattr(obj, name, values[name])
        return obj
