"""SSE parsing and the official accumulation rules."""

from __future__ import annotations

from harness.load.client import _Accumulator, _deltas


def test_role_only_and_empty_deltas_are_not_a_first_chunk() -> None:
    acc = _Accumulator()
    assert acc.feed({"role": "assistant", "content": ""}) is False
    assert acc.feed({"content": None}) is False
    assert acc.feed({"content": "Hi"}) is True
    assert acc.feed({"content": " there"}) is False
    out = acc.output(streaming=True)
    assert out.output == ["Hi", " there"] and out.reasoning is None


def test_reasoning_first_then_content() -> None:
    acc = _Accumulator()
    assert acc.feed({"reasoning_content": "think"}) is True
    acc.feed({"reasoning": " more"})
    acc.feed({"content": "answer", "reasoning_content": "ignored"})
    out = acc.output(streaming=True)
    assert out.reasoning == ["think", " more"]
    assert out.output == "answer"  # a plain string when there is reasoning


def test_pure_tool_call_delta_is_a_first_chunk_and_calls_accumulate() -> None:
    acc = _Accumulator()
    assert acc.feed(
        {
            "tool_calls": [
                {"index": 0, "id": "c1", "function": {"name": "look", "arguments": '{"q"'}}
            ]
        }
    )
    acc.feed({"tool_calls": [{"index": 0, "function": {"arguments": ': "x"}'}}]})
    out = acc.output(streaming=True)
    assert out.tool_calls == [
        {"id": "c1", "type": "function", "function": {"name": "look", "arguments": '{"q": "x"}'}}
    ]


def test_sse_frames_with_done_comments_and_completions_text() -> None:
    frame = (
        b": keep-alive\n"
        b'data: {"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":null}]}\n'
    )
    assert _deltas(frame) == [{"content": "x"}]
    assert _deltas(b"data: [DONE]") == []
    assert _deltas(b'data: {"choices":[{"index":0,"text":"t","finish_reason":"stop"}]}') == [
        {"content": "t", "_finish": "stop"}
    ]
