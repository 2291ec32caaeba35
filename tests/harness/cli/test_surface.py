"""``endpoints-harness`` in click keeps every command and option it had (the argparse
version's surface, written down when it was replaced), and speaks the official CLI's
idiom: ``Error: …`` on stderr, status 2 when a command cannot do its work."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cli import main
from harness.cli.commands import harness
from tests.support.cli import resolved, surface

TOKENIZER = "--chat-template --tokenizer --tokenizer-registry"
REQUESTS = "--api --api-key --drain-timeout --max-tokens --warmup"
SLA = "--max-error-rate --tps-per-user-min --ttft-p90-max-ms"
STEADY = "--min-duration-s --region --superpass-size --warmup"
# command: (its arguments, its long options), as they were before click.
LEGACY = {
    "run": ("", f"{TOKENIZER} {REQUESTS} --client --concurrency --dataset --duration "
                "--endpoint --load-pattern --model --n-samples --no-salt --no-streaming "
                "--no-tool-delay --output --prompt-column --request-usage --seed "
                "--target-qps --trajectories --workers"),
    "recompute": ("run_dir", f"{TOKENIZER} --counts --jobs --official-failures --output"),
    "count-part": ("run_dir", f"{TOKENIZER} --output --part --parts"),
    "analyze": ("run_dir", f"{TOKENIZER} {STEADY}"),
    "report": ("run_dir", f"{TOKENIZER} {STEADY} --plotly-js"),
    "sweep": ("", f"{TOKENIZER} {REQUESTS} {SLA} --agentic --dataset --duration-per-point "
                  "--endpoint --max-concurrency --model --offline --output --prompt-column "
                  "--submission --trajectories"),
    "search": ("", f"{TOKENIZER} {REQUESTS} {SLA} --dataset --duration --endpoint "
                   "--load-pattern --max-level --max-probes --model --no-streaming --output "
                   "--probe-duration --prompt-column --seed --start --step"),
    "serve-sim": ("", "--batch-slowdown --chunks --drop-rate --error-burst-count "
                      "--error-burst-start --error-rate --host --instant --max-batch "
                      "--output-tokens --port --processes --seed --shift-after --shift-factor "
                      "--tpot-drift-per-1k --tpot-ms --ttft-ms --whitespace-first-rate"),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(LEGACY))
def test_every_command_and_option_of_before_is_still_there(name: str) -> None:
    arguments, options = LEGACY[name]
    command = harness.commands[name]
    have, positional = surface(command)
    assert set(options.split()) <= have
    assert positional[: len(arguments.split())] == arguments.split()


def test_counts_takes_its_files_as_it_always_did(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``recompute RUN --counts a.npz b.npz`` (argparse's nargs='+'), and the option
    repeated; extra arguments without --counts are a usage error."""
    _, params = resolved(harness, ["recompute", "run", "--counts", "a.npz", "b.npz"])
    assert (params["counts"], params["more_counts"]) == ((Path("a.npz"),), (Path("b.npz"),))
    _, params = resolved(harness, ["recompute", "run", "--counts", "a", "--counts", "b"])
    assert params["counts"] == (Path("a"), Path("b"))
    assert main(["recompute", str(tmp_path), "x.npz"]) == 2
    assert "unexpected extra argument x.npz" in capsys.readouterr().err


def test_a_command_that_cannot_work_says_error_with_status_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PRISM_USER_API_TOKEN", raising=False)
    assert main(["analyze", str(tmp_path)]) == 2
    assert capsys.readouterr().err == f"Error: {tmp_path} has no events.jsonl\n"
    bad = ["sweep", "--endpoint", "http://127.0.0.1:1", "--model", "m", "--max-concurrency",
           "64", "--dataset", "d", "--submission", "s", "--output", "o",
           "--register-with", "ftp://x"]  # fmt: skip
    assert main(bad) == 2
    assert "'ftp://x' is not an http(s) address" in capsys.readouterr().err
    assert main([*bad[:-1], "http://127.0.0.1:1/submission-api"]) == 2
    assert "--register-with needs --token" in capsys.readouterr().err
