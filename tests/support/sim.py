"""The harness's simulated endpoint, on loopback, for tests that need an endpoint."""

from __future__ import annotations

import asyncio
import threading

from harness.sim import SimConfig, SimServer


class RunningSim:
    """The simulator on its own event loop in a thread (callers may run a loop of their own)."""

    def __init__(self, config: SimConfig) -> None:
        self.loop = asyncio.new_event_loop()
        self.server = SimServer(config)
        self.port = 0
        ready = threading.Event()

        def run() -> None:
            asyncio.set_event_loop(self.loop)
            self.port = self.loop.run_until_complete(self.server.start())
            ready.set()
            self.loop.run_forever()

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()
        if not ready.wait(10):
            raise RuntimeError("the simulator did not start")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> RunningSim:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        asyncio.run_coroutine_threadsafe(self.server.close(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
