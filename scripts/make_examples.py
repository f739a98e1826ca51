"""Write the saved branches in ``examples/`` from real lionagi 0.36 APIs.

Each example is a ``lionagi.Branch`` built with lionagi's own message factories and saved with
``Branch.to_dict(mode="json")``. Only two things are changed afterwards, so that running this
script again gives the same bytes: every UUID is replaced by one drawn from a random generator
seeded with the example's name (consistently, wherever it occurs), and every ``created_at`` by
a fixed clock that ticks one minute per timestamp.

    python scripts/make_examples.py                 # (re)write examples/
    python scripts/make_examples.py --out DIR       # write elsewhere
    python scripts/make_examples.py --check         # exit 1 if examples/ differs from a rebuild

Examples:

- ``support.json``: a support conversation with a system message, guidance and context.
- ``tools.json``: tool rounds (ActionRequest/ActionResponse), including one result recorded
  after the last instruction, which the compiler folds into the next turn.
- ``images.json``: a user sending screenshots as small PNG data URIs.
- ``broken.json``: an agent-curated view (``metadata.current_progression``) that ``check``
  rejects: it starts with an assistant response, holds two adjacent instructions, repeats a
  record and names a deleted message.
"""



import argparse
import base64
import json
import os
import random
import struct
import sys
import tempfile
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any
from uuid import UUID

# lionagi reads its settings at import: keep it from writing logs or picking up a .env here.
os.environ.setdefault("LOG_AUTO_SAVE_ON_EXIT", "false")
os.environ.setdefault("LIONAGI_HOME", tempfile.mkdtemp(prefix="lionagi-turns-examples-"))

from lionagi import Branch, iModel
from lionagi.protocols.action.tool import Tool
from lionagi.protocols.generic.progression import Progression

REPO = Path(__file__).resolve().parent.parent
EPOCH = 1_767_225_600.0  # 2026-01-01T00:00:00Z
TICK = 60.0


def _model() -> iModel:
    return iModel(provider="openai", model="gpt-4.1-mini", requires_tokens=False)


def support() -> Branch:
    branch = Branch(
        name="northwind-support",
        chat_model=_model(),
        system=(
            "You are Ada, the support assistant for Northwind Cloud Storage.\n"
            "Be accurate and kind. Never promise refunds yourself: billing disputes go to the "
            "human billing team through a ticket."
        ),
    )
    customer = {"name": "Maya Chen", "plan": "Pro (annual)", "account_id": "NW-48213"}
    branch.msgs.add_message(
        instruction="I was charged twice for my Pro plan this month. Can you fix it?",
        guidance="Answer in at most three sentences. Ask for invoice numbers if they are missing.",
        context=[{"customer": customer}],
    )
    branch.msgs.add_message(
        assistant_response=(
            "I'm sorry about the double charge, Maya. Could you share the two invoice numbers? "
            "I'll pass them to our billing team, who handle refunds."
        )
    )
    branch.msgs.add_message(
        instruction="Sure: INV-2291 and INV-2297.",
        context=[
            {
                "invoices": [
                    {"id": "INV-2291", "amount": "$119.88", "status": "paid", "date": "2026-03-01"},
                    {"id": "INV-2297", "amount": "$119.88", "status": "paid", "date": "2026-03-02"},
                ]
            }
        ],
    )
    branch.msgs.add_message(
        assistant_response=(
            "Thanks! Both invoices are for $119.88 and marked paid a day apart, so this looks "
            "like a duplicate charge. I've opened billing ticket BL-7731; a person from billing "
            "will reply within one business day."
        )
    )
    return branch


def get_order(order_id: str) -> dict[str, Any]:
    """Look up an order by its number.

    Args:
        order_id: The order number, without '#'.
    """
    orders = {
        "1042": {"order_id": "1042", "status": "shipped", "carrier": "UPS",
                 "tracking": "1Z999AA10123456784"},
        "1043": {"order_id": "1043", "status": "packing", "carrier": None, "tracking": None},
    }
    return orders[order_id]


def track_shipment(tracking: str) -> dict[str, Any]:
    """Current location and delivery estimate of a parcel.

    Args:
        tracking: The carrier's tracking number.
    """
    return {"tracking": tracking, "location": "Louisville, KY hub", "eta": "2026-03-12"}


def tools() -> Branch:
    branch = Branch(
        name="order-desk",
        chat_model=_model(),
        system="You are an order-status assistant. Use the tools; never guess a date.",
    )
    schemas = [Tool(func_callable=f).tool_schema for f in (get_order, track_shipment)]
    functions: dict[str, Callable[..., Any]] = {
        "get_order": get_order,
        "track_shipment": track_shipment,
    }

    def call(name: str, **arguments: Any) -> None:
        request = branch.msgs.add_message(action_function=name, action_arguments=arguments)
        branch.msgs.add_message(action_request=request, action_output=functions[name](**arguments))

    branch.msgs.add_message(
        instruction="Where is order #1042, and when will it arrive?", tool_schemas=schemas
    )
    branch.msgs.add_message(assistant_response="Let me look up order #1042 and its shipment.")
    call("get_order", order_id="1042")
    call("track_shipment", tracking="1Z999AA10123456784")
    branch.msgs.add_message(
        instruction="Summarize the delivery status for the customer in one sentence.",
        tool_schemas=schemas,
    )
    branch.msgs.add_message(
        assistant_response=(
            "Order #1042 has shipped with UPS (1Z999AA10123456784), is at the Louisville hub "
            "and should arrive on 12 March 2026."
        )
    )
    branch.msgs.add_message(
        instruction="Has order #1043 shipped yet?", tool_schemas=schemas
    )
    branch.msgs.add_message(assistant_response="Checking order #1043.")
    call("get_order", order_id="1043")
    return branch


def _png(width: int, height: int, rgb: Callable[[int, int], tuple[int, int, int]]) -> str:
    """A small deterministic PNG as a data URI."""
    rows = b"".join(
        b"\x00" + b"".join(bytes(rgb(x, y)) for x in range(width)) for y in range(height)
    )

    def chunk(kind: bytes, body: bytes) -> bytes:
        crc = zlib.crc32(kind + body) & 0xFFFFFFFF
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", crc)

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    png = (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows, 9))
        + chunk(b"IEND", b"")
    )
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def images() -> Branch:
    branch = Branch(
        name="upload-helpdesk",
        chat_model=_model(),
        system=(
            "You help users of the Northwind desktop app. Describe what you see before advising."
        ),
    )
    error_dialog = _png(8, 6, lambda x, y: (200, 40, 40) if 1 <= y <= 4 else (240, 240, 240))
    progress_bar = _png(8, 2, lambda x, y: (40, 160, 60) if x < 3 else (220, 220, 220))
    branch.msgs.add_message(
        instruction="This dialog appears whenever I upload a folder. What does it mean?",
        images=[error_dialog],
        image_detail="low",
    )
    branch.msgs.add_message(
        assistant_response=(
            "The red banner is the 'sync conflict' dialog: a file in that folder changed on "
            "another device during the upload. Choose 'Keep both' to continue."
        )
    )
    branch.msgs.add_message(
        instruction="Now the upload is stuck here. Should I wait?",
        images=[progress_bar],
        image_detail="low",
    )
    branch.msgs.add_message(
        assistant_response=(
            "It is about a third done. Large folders pause while hashing files, so give it a "
            "few minutes before restarting."
        )
    )
    return branch


def broken() -> Branch:
    branch = Branch(
        name="password-reset",
        chat_model=_model(),
        system="You are a help-desk assistant for account access.",
    )
    deleted = branch.msgs.add_message(instruction="Hi, I can't log in.")
    answer = branch.msgs.add_message(
        assistant_response="I've sent a password-reset link to your registered email."
    )
    expired = branch.msgs.add_message(instruction="The link says it has expired.")
    # A failed call left the previous instruction unanswered before the user wrote again.
    again = branch.msgs.add_message(instruction="Hello? Are you still there?")
    reply = branch.msgs.add_message(
        assistant_response="Sorry for the wait! Here is a fresh link; it is valid for 30 minutes."
    )
    branch.msgs.messages.exclude(deleted)
    # An agent-curated view: dropped the deleted first instruction's record but still names it,
    # kept its answer first, and repeats the last reply.
    assert branch.system is not None
    branch.metadata["current_progression"] = Progression(
        order=[branch.system.id, answer.id, expired.id, again.id, reply.id, reply.id, deleted.id]
    )
    return branch


EXAMPLES: dict[str, Callable[[], Branch]] = {
    "support": support,
    "tools": tools,
    "images": images,
    "broken": broken,
}


def normalize(data: Any, name: str) -> Any:
    """``data`` with every UUID string replaced consistently by a seeded one and every
    ``created_at`` by the fixed clock, in document order."""
    rng = random.Random(f"lionagi-turns/examples/{name}")
    ids: dict[str, str] = {}
    clock = iter(EPOCH + TICK * i for i in range(1_000_000))

    def new_id() -> str:
        return str(UUID(int=rng.getrandbits(128), version=4))

    def walk(value: Any, key: str | None = None) -> Any:
        if isinstance(value, dict):
            return {k: walk(v, k) for k, v in value.items()}
        if isinstance(value, list):
            return [walk(v) for v in value]
        if key == "created_at" and isinstance(value, int | float):
            return next(clock)
        if isinstance(value, str) and _is_uuid(value):
            if value not in ids:
                ids[value] = new_id()
            return ids[value]
        return value

    return walk(data)


def _is_uuid(text: str) -> bool:
    if len(text) != 36:
        return False
    try:
        return str(UUID(text)) == text.lower()
    except ValueError:
        return False


def render(name: str) -> str:
    """The exact file text of one example."""
    data = normalize(EXAMPLES[name]().to_dict(mode="json"), name)
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--out", type=Path, default=REPO / "examples", help="output directory")
    parser.add_argument(
        "--check",
        action="store_true",
        help="compare with --out instead of writing; exit 1 on a difference",
    )
    args = parser.parse_args(argv)
    out: Path = args.out
    stale = []
    for name in EXAMPLES:
        text = render(name)
        target = out / f"{name}.json"
        if args.check:
            if not target.exists() or target.read_text(encoding="utf-8") != text:
                stale.append(str(target))
            continue
        out.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        print(f"wrote {target}")
    if stale:
        print(
            "out of date (run python scripts/make_examples.py): " + ", ".join(stale),
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
