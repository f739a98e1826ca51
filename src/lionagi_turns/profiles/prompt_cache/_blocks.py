"""The prompt-cache profile's hand-over to a provider adapter: ``system_blocks`` with its
segment sizes (ADR-0127 D5 reads them; ``integration._anthropic`` places the marks)."""

from __future__ import annotations

__all__ = ("SegmentedBlocks",)


class SegmentedBlocks(list[str]):
    """``system_blocks`` as the prompt-cache profile hands them over: the stable blocks, then
    the conversation blocks, with the segment sizes and the previous request's end.

    A plain list to lionagi's own adapter (which then marks only its last block), so a request
    that reaches lionagi's adapter without this projection installed is still valid.
    """

    stable_count: int
    previous_end: int | None

    def __init__(
        self, stable: list[str], conversation: list[str], previous_end: int | None
    ) -> None:
        super().__init__([*stable, *conversation])
        self.stable_count = len(stable)
        self.previous_end = previous_end

    def __deepcopy__(self, memo: dict[int, object]) -> SegmentedBlocks:
        return SegmentedBlocks(
            list(self[: self.stable_count]), list(self[self.stable_count :]), self.previous_end
        )
