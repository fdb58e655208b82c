"""What every object holding an engine resource shares: a context manager
and a finalizer that call its close()."""
from __future__ import annotations

from typing import TypeVar

_Self = TypeVar("_Self", bound="Closing")


class Closing:
    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self: _Self) -> _Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass
