"""Names the portal makes from what people type, and when two organisation names are the
same organisation or look like it (issue 44: "Acme Corp." joined Acme Corp by its slug)."""

from __future__ import annotations

import functools
import re
import unicodedata

# Words that say what kind of company a name is, not which one.
LEGAL_FORMS = frozenset(
    {
        "ab", "ag", "as", "bv", "co", "company", "corp", "corporation", "gmbh", "inc",
        "incorporated", "kk", "limited", "llc", "llp", "ltd", "nv", "oy", "plc", "pte",
        "pty", "sa", "sarl", "sas", "spa", "srl",
    }
)  # fmt: skip
# Names of at least this many characters one edit apart look like one organisation.
_NEAR_FROM_LENGTH = 6


def slugify(name: str) -> str:
    """The CLI's org slug: non-word characters to '_', runs collapsed, trimmed."""
    slug = re.sub(r"[^\w-]", "_", name.strip())
    slug = re.sub(r"_+", "_", slug).strip("_")
    return slug[:64] or "unknown"


@functools.lru_cache(maxsize=65536)  # a large record asks it of every curve
def organisation_key(name: str) -> str:
    """An organisation name's normalised form, unique among organisations: compatibility
    characters folded, case folded, anything but letters and digits a single space."""
    folded = unicodedata.normalize("NFKC", name).casefold()
    return " ".join(re.sub(r"[\W_]+", " ", folded).split())


def _core(key: str) -> str:
    words = key.split()
    while len(words) > 1 and words[-1] in LEGAL_FORMS:
        words.pop()
    return " ".join(words)


def _one_edit_apart(a: str, b: str) -> bool:
    """One letter changed, added, dropped, or two neighbours swapped."""
    if abs(len(a) - len(b)) > 1:
        return False
    if len(a) > len(b):
        a, b = b, a
    i = 0
    while i < len(a) and a[i] == b[i]:
        i += 1
    if len(a) < len(b):
        return a[i:] == b[i + 1 :]
    swapped = a[i + 1 : i + 2] == b[i : i + 1] and a[i : i + 1] == b[i + 1 : i + 2]
    return a[i + 1 :] == b[i + 1 :] or (swapped and a[i + 2 :] == b[i + 2 :])


def looks_like(name: str, other: str) -> bool:
    """Whether two organisation names are, or look like, one organisation: the same
    normalised form, the same once legal forms are set aside ("Acme Corporation", "Acme
    Corp"), or a typo apart ("Acme Crop")."""
    a, b = organisation_key(name), organisation_key(other)
    if a == b or _core(a) == _core(b):
        return True
    return any(
        min(len(x), len(y)) >= _NEAR_FROM_LENGTH and _one_edit_apart(x, y)
        for x, y in ((a, b), (_core(a), _core(b)))
    )
