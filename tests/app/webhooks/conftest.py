"""The webhooks' tests deliver to a real receiver on loopback."""

from tests.support.receiver import receiver

__all__ = ["receiver"]
