"""Tests' view of a store folder (``manifesto.store``): its entry files, an entry as plain JSON
data with its blob fields put back, and an entry written back in an envelope. Tests that plant
or damage entries go through these, so they state what they change, not the file format."""

from __future__ import annotations

import json
import zlib
from pathlib import Path

from manifesto.edge.entries import open_envelope
from manifesto.store import Store, seal


def entry_files(folder: Path, kind: str | None = None) -> list[Path]:
    """The files of the entries in ``folder`` (blobs left out), of ``kind`` when given."""
    return [Path(folder, f.key[:2], f.key) for f in Store(str(folder)).scan()
            if f.kind != "blob" and (kind is None or f.kind == kind)]


def all_files(folder: Path) -> list[Path]:
    """Every file of the store in ``folder``: entries and blobs."""
    return [p for p in Path(folder).rglob("*") if p.is_file()]


def read_entry(path: Path) -> dict:
    """The entry in ``path`` as JSON data, its blob fields (the artifact text) put back."""
    envelope = open_envelope(path.read_bytes())
    data = json.loads(envelope.body)
    for field, key in envelope.fields.items():
        data[field] = open_envelope((path.parent.parent / key[:2] / key).read_bytes()).body.decode()
    return data


def write_entry(path: Path, data: dict) -> None:
    """Write ``data`` to ``path`` as an entry of its ``kind``, every field inline."""
    path.write_bytes(seal(data["kind"], json.dumps(data).encode()))


def edit_body(path: Path, edit) -> None:
    """Replace the inflated body of the file in ``path`` (an entry or a blob) by ``edit(body)``,
    its header and compression intact and its MAC made again under this user's key: damage
    below the compression and MAC layers, which only the store's own checks can catch."""
    from manifesto.edge.entries import ENVELOPE
    from manifesto.edge.trust import mac

    raw = path.read_bytes()
    header, _, packed = raw.partition(b"\n")
    rest = header[len(ENVELOPE) + 1 + 32:] + b"\n" + zlib.compress(edit(zlib.decompress(packed)))
    path.write_bytes(ENVELOPE + b" " + mac(rest).hex().encode() + rest)
