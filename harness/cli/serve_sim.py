"""``endpoints-harness serve-sim``: a simulated OpenAI-compatible streaming endpoint."""

from __future__ import annotations

from typing import Any

import click

from harness.sim import SimConfig, run_server


@click.command("serve-sim", short_help="a simulated streaming endpoint")
@click.option("--host", default="127.0.0.1")
@click.option("--port", type=int, default=8001)
@click.option("--instant", is_flag=True, help="no delays (roofline)")
@click.option("--chunks", type=int, default=100, help="chunks per response with --instant")
@click.option("--ttft-ms", type=float, default=30.0)
@click.option("--tpot-ms", type=float, default=5.0)
@click.option("--max-batch", type=int, default=64)
@click.option("--batch-slowdown", type=float, default=0.02)
@click.option("--output-tokens", type=int, default=128)
@click.option("--error-rate", type=float, default=0.0)
@click.option("--drop-rate", type=float, default=0.0)
@click.option("--whitespace-first-rate", type=float, default=0.0)
@click.option(
    "--tpot-drift-per-1k",
    type=float,
    default=0.0,
    help="fault: per-token time grows by this fraction per 1,000 requests (never settles)",
)
@click.option("--shift-after", type=int, default=None, help="fault: a level shift from here")
@click.option("--shift-factor", type=float, default=1.0, help="fault: per-token time × this")
@click.option("--error-burst-start", type=int, default=None, help="fault: by arrival order")
@click.option("--error-burst-count", type=int, default=0)
@click.option("--seed", type=int, default=0)
@click.option("--processes", type=int, default=1, help="processes sharing the port (SO_REUSEPORT)")
def serve_sim(host: str, port: int, instant: bool, chunks: int, processes: int,
              **faults: Any) -> None:  # fmt: skip
    """Serve a simulated OpenAI-compatible streaming endpoint until interrupted."""
    config = SimConfig.instant(chunks) if instant else SimConfig(**faults)
    try:
        run_server(config, host, port, processes)
    except KeyboardInterrupt:
        pass
