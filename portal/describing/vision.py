"""The vision model: its settings, the request for one figure, what one call costs, and the text kept.

A deployment configures it apart from the answer model (``CAIRN_VISION_*``): describing
figures is an administrator's task with its own provider, price and monthly cap.
"""

from __future__ import annotations

import base64

from flask import current_app

from portal.answers.model_client import ChatClient, Completion
from portal.config import VISION_MODEL
from portal.numbers import MAX_NUMBER

MAX_DESCRIPTION_CHARS = 1000
# Enough tokens for 1,000 characters of English; a longer answer is cut by ``clean``.
MAX_TOKENS = 400

PROMPT = (
    "Describe this figure from the document {title!r} factually, for someone searching the "
    "document's text: what it shows, its labels, values, codes and relationships. One paragraph, "
    "plain sentences, at most 1,000 characters, no Markdown. Do not guess what is not visible. "
    "The document labels it: {label}"
)


def client() -> ChatClient | None:
    """The configured vision model, or None when no base URL is set."""
    return ChatClient.configured(current_app.config, VISION_MODEL)


def timeout_seconds() -> float:
    """How long one call may take (``CAIRN_VISION_TIMEOUT``), as the client is configured with it."""
    return float(current_app.config[VISION_MODEL.timeout])


def describe(vision: ChatClient, webp: bytes, title: str, label: str) -> Completion:
    """One figure, sent as a data URL in an OpenAI-style image part; ``ModelError`` when the call fails."""
    image = "data:image/webp;base64," + base64.b64encode(webp).decode("ascii")
    messages = [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": PROMPT.format(title=title, label=label)},
                {"type": "image_url", "image_url": {"url": image}},
            ],
        }
    ]
    return vision.exchange(messages, max_tokens=MAX_TOKENS)


def cost_microusd(completion: Completion) -> int:
    """What the call cost, in millionths of a US dollar, at the configured prices per million tokens; at most
    ``MAX_NUMBER`` ($2,147), the most the run's INTEGER column holds."""
    config = current_app.config
    dollars = (
        completion.prompt_tokens * float(config["CAIRN_VISION_PRICE_INPUT"])
        + completion.completion_tokens * float(config["CAIRN_VISION_PRICE_OUTPUT"])
    ) / 1_000_000
    return round(min(dollars * 1_000_000, MAX_NUMBER))


def monthly_cap_microusd() -> int:
    return round(float(current_app.config["CAIRN_VISION_MONTHLY_CAP"]) * 1_000_000)


def clean(text: str) -> tuple[str, bool]:
    """The description as stored (one line, no square brackets, at most 1,000 characters, cut at a
    word boundary with "…") and whether it was cut.

    One line keeps it one paragraph; brackets become parentheses so it cannot write a figure marker.
    """
    line = " ".join(text.split()).replace("[", "(").replace("]", ")")
    if len(line) <= MAX_DESCRIPTION_CHARS:
        return line, False
    cut = line[: MAX_DESCRIPTION_CHARS - 1]
    space = cut.rfind(" ")
    if space > MAX_DESCRIPTION_CHARS // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:.-") + "…", True
