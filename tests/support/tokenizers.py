"""The chat template and special tokens of the word-level tokenizer the harness tests build."""

from __future__ import annotations

# A small chat template in the usual style, rendering reasoning and tool calls (arguments
# that are an object through tojson, as the published templates do).
CHAT_TEMPLATE = (
    "{{ bos_token }}{% for m in messages %}<|start|>{{ m.role }}<|sep|>"
    "{% if m.reasoning_content %}<|think|>{{ m.reasoning_content }}<|/think|>{% endif %}"
    "{{ m.content }}"
    "{% if m.tool_calls %}{% for c in m.tool_calls %}<|call|>{{ c.function.name }} "
    "{% if c.function.arguments is mapping %}{{ c.function.arguments | tojson }}"
    "{% else %}{{ c.function.arguments }}{% endif %}{% endfor %}{% endif %}<|end|>{% endfor %}"
    "{% if add_generation_prompt %}<|start|>assistant<|sep|>{% endif %}"
)
SPECIALS = ["<|bos|>", "<|start|>", "<|sep|>", "<|end|>", "<|think|>", "<|/think|>", "<|call|>"]
