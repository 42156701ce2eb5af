"""Progress on stderr: a bar redrawn in place on a terminal, one plain line per notebook
otherwise (CI logs keep every line)."""

from __future__ import annotations

import sys
import time


def _clock(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds // 60}:{seconds % 60:02d}"


class Progress:
    def __init__(self, total: int, stream=None, enabled: bool = True, width: int = 28):
        self.total, self.done = total, 0
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = enabled and total > 0
        self.terminal = bool(getattr(self.stream, "isatty", lambda: False)())
        self.width = width
        self.start = time.monotonic()

    def _times(self) -> str:
        elapsed = time.monotonic() - self.start
        text = f"{_clock(elapsed)} elapsed"
        if 0 < self.done < self.total:
            text += f", ~{_clock(elapsed / self.done * (self.total - self.done))} left"
        return text

    def step(self, line: str) -> None:
        """One notebook done; ``line`` says which and how it went."""
        self.done += 1
        if not self.enabled:
            return
        if self.terminal:
            filled = self.width * self.done // self.total
            bar = "█" * filled + "·" * (self.width - filled)
            self.stream.write(f"\r\033[K{bar} {self.done}/{self.total} notebooks, {self._times()}")
            if self.done == self.total:
                self.stream.write("\n")
        else:
            self.stream.write(f"[{self.done}/{self.total}, {self._times()}] {line}\n")
        self.stream.flush()
