"""What the results routes take from the settings: the price presets buyers may choose."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends

from app.results.domain.presets import PricePreset, price_presets
from app.web.deps import SettingsDep


def presets(settings: SettingsDep) -> dict[str, PricePreset]:
    """The operator's presets file, read again once it has changed (editing it needs no
    restart; a broken file stopped the portal at start, app.main)."""
    return price_presets(settings.price_presets_file)


PresetsDep = Annotated[dict[str, PricePreset], Depends(presets)]
