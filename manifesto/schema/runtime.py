"""Tables of what the runtimes accept, derived from their releases by ``tools/gen_*_table.py``.

Plain msgspec Structs so the bundled JSON decodes fast and only when a render needs it. The
values are facts read off a release (the generator records which), never typed by hand.
"""

from __future__ import annotations

import msgspec

__all__ = ["VllmArg", "VllmDeprecation", "VllmTable", "RouterParam", "RouterPlugin", "RouterFlag", "RouterTable",
           "RuntimeTables",
           "FORMAT"]

#: The table layout this code reads; a generator writing another one must bump it.
FORMAT = 1


class _T(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    pass


class VllmDeprecation(_T):
    message: str
    replacement: str | None = None


class VllmArg(_T):
    """One action of the ``vllm serve`` parser."""

    name: str  # canonical long option without the dashes: max-model-len
    dest: str
    options: list[str]  # every option string the parser accepts for it, hidden ones included
    kind: str  # value | flag (store_true) | onoff (--x/--no-x, --enable-x/--disable-x) | append
    type: str | None = None  # int | float | str | json | json_or_str | size | size_or_auto
    optional: bool = False  # '' and 'None' mean unset
    nargs: str | int | None = None
    choices: list[str] | None = None
    negatives: list[str] | None = None
    deprecated: VllmDeprecation | None = None
    bounds: dict[str, float] | None = None  # gt / ge / lt / le of the config field behind it


class VllmTable(_T):
    format: int
    vllm: str
    source: str
    generator: str
    args: list[VllmArg]
    after_parse: dict[str, list[str]]  # flag -> values vLLM accepts after parsing
    removed: dict[str, str]  # flag -> the release's own hint
    env: list[str]  # VLLM_* names in vllm.envs.environment_variables


class RouterParam(_T):
    name: str  # JSON key (Go's encoding/json matches it case-insensitively)
    type: str  # string | integer | number | boolean | array | object | duration | any
    # A nested struct's own fields (decoded as strictly as its parent); None: not listed.
    fields: list[RouterParam] | None = None


class RouterDeprecation(_T):
    since: str | None = None
    removed_in: str | None = None
    replacement: str | None = None


class RouterPlugin(_T):
    type: str
    deprecated: RouterDeprecation | None = None
    # None: the factory never decodes its parameters (anything is ignored); otherwise the
    # fields its parameter struct declares, decoded with DisallowUnknownFields.
    parameters: list[RouterParam] | None = None
    strict: bool = True
    stability: str | None = None  # Alpha | Beta | Stable; Alpha needs --allow-experimental-plugins
    # Other parameter structs the factory tries, in order, when ``parameters`` does not decode.
    alternatives: list[list[RouterParam]] | None = None


class RouterFlag(_T):
    name: str
    type: str  # string | int | bool | duration | float | ...


class RouterTable(_T):
    format: int
    router: str  # the git ref read (tag or main)
    commit: str
    source: str
    generator: str
    api_versions: list[str]  # preferred first
    plugins: list[RouterPlugin]
    epp_flags: list[RouterFlag]
    sidecar_flags: list[RouterFlag]


class RuntimeTables(msgspec.Struct, frozen=True):
    """How resolution finds a table: ``vllm("0.33.0")`` and ``router("v0.10.0")`` give the bundled
    table or None. The load layer builds it (the tables are package data); resolve only calls it."""

    vllm: object  # Callable[[str], VllmTable | None]
    router: object  # Callable[[str], RouterTable | None]
