"""Status codes and the one exception every failing call raises."""
from __future__ import annotations

import enum


class StatusCode(enum.IntEnum):
    """cdz_status_code of cadenza/status.h."""

    OK = 0
    INVALID_ARGUMENT = 1
    INVALID_CONFIG = 2
    NOT_FOUND = 3
    IO_ERROR = 4
    ABI_MISMATCH = 5
    UNSUPPORTED = 6
    CANCELLED = 7
    OUT_OF_MEMORY = 8
    INTERNAL = 9
    BUSY = 10


class CadenzaError(Exception):
    """A failed call: the status code and the library's message.

    A pipeline file's validation errors arrive as one message with a line per
    problem, each "file:line:column: message".
    """

    def __init__(self, code: StatusCode | int, message: str) -> None:
        try:
            self.code = StatusCode(code)
        except ValueError:
            self.code = StatusCode.INTERNAL
        self.message = message
        super().__init__(f"{self.code.name.lower()}: {message}")


def invalid_argument(message: str) -> CadenzaError:
    return CadenzaError(StatusCode.INVALID_ARGUMENT, message)
