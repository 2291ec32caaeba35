"""What the tests share: services, accounts, the running portal, bundles, fakes and a
checked submission. Test modules import from here, never from one another."""

from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[2]
