"""How the test processes share the run (pytest-xdist): one test at a time to whichever
process is free, except the tests on the deployed stack (their parameter
``postgresql+redis``: the session portal's and the fault tests' own portal), which all
go to one process.

The deployed portal (PostgreSQL, Redis, an S3 store, web and worker on hosts of their
own) loads the demo through the real pipeline when it starts: half a minute of both
cores, paid once per run instead of once per process. xdist's own ``loadgroup`` cannot
do this on pytest 9 (it renames a test's node id to carry its group, which pytest 9 no
longer lets a plugin do), so the unit of work is decided here, from the node id.
"""

from __future__ import annotations

from xdist.scheduler import LoadScopeScheduling

DEPLOYED_PORTAL = "postgresql+redis"  # the portal fixtures' parameter (tests/conftest.py)


class OnePortalPerRun(LoadScopeScheduling):
    """Each test a unit of its own, the deployed portal's tests one unit together. The
    units go out in the order collected (tests/conftest.py puts the heaviest first),
    the largest unit first of all."""

    def _split_scope(self, nodeid: str) -> str:
        _name, bracket, params = nodeid.partition("[")
        if bracket and DEPLOYED_PORTAL in params.rstrip("]").split("-"):
            return DEPLOYED_PORTAL
        return nodeid
