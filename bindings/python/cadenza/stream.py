"""Streaming: the engine runs in a thread of its own and hands each chunk
over through a queue of one, so it never runs more than a chunk ahead of the
reader; leaving the loop (or close()) makes the next callback return
non-zero, which cancels the synthesis."""
from __future__ import annotations

import ctypes
import queue
import threading
from ctypes import byref
from typing import TYPE_CHECKING, Any

import numpy as np

from .closing import Closing
from ._library import AudioCallback, Stats, SynthesisParams, check, lib
from .errors import CadenzaError, StatusCode
from .synthesis import stats_dict

if TYPE_CHECKING:
    from .pipeline import Pipeline

_POLL_SECONDS = 0.05
_END = object()


class Producer:
    """The synthesis thread. Holds no reference to the Stream that reads it,
    so an abandoned Stream is collected and cancels it."""

    def __init__(self, pipeline: "Pipeline", text: bytes, params: SynthesisParams, keep: Any) -> None:
        self.pipeline = pipeline
        self.queue: queue.Queue = queue.Queue(maxsize=1)
        self.cancel = threading.Event()
        self.cancelled = False
        self.stats: dict[str, Any] | None = None
        self.sample_rate: int | None = None
        self.callback_error: BaseException | None = None
        self._callback = AudioCallback(self._on_audio)
        self.thread = threading.Thread(target=self._run, args=(text, params, keep), name="cadenza-stream",
                                       daemon=True)
        self.thread.start()

    @property
    def running(self) -> bool:
        return self.thread.is_alive()

    def stop(self) -> None:
        """Cancels the synthesis if it still runs and waits for the thread."""
        self.cancel.set()
        if self.thread is not threading.current_thread():
            self.thread.join()
        if self.pipeline._stream is self:
            self.pipeline._stream = None

    def _put(self, item: Any) -> bool:
        while not self.cancel.is_set():
            try:
                self.queue.put(item, timeout=_POLL_SECONDS)
                return True
            except queue.Full:
                continue
        return False

    def _on_audio(self, samples: Any, count: int, rate: int, user_data: Any) -> int:
        try:  # nothing may unwind through the C library
            if self.cancel.is_set():
                return 1
            chunk = np.ctypeslib.as_array(samples, shape=(count,)).copy() if count else np.zeros(0, np.float32)
            self.sample_rate = rate
            return 0 if self._put(chunk) else 1
        except BaseException as error:
            self.callback_error = error
            return 1

    def _run(self, text: bytes, params: SynthesisParams, keep: Any) -> None:
        error: BaseException | None = None
        with self.pipeline._lock:
            handle = self.pipeline._handle
            if handle is None:
                error = CadenzaError(StatusCode.INVALID_ARGUMENT, "the pipeline is closed")
            else:
                try:
                    check(lib().cdz_pipeline_synthesize_stream(handle, text, byref(params), self._callback, None))
                except CadenzaError as failure:
                    if failure.code == StatusCode.CANCELLED and self.callback_error is not None:
                        error = self.callback_error
                    elif failure.code == StatusCode.CANCELLED and self.cancel.is_set():
                        self.cancelled = True
                    else:
                        error = failure
                stats = Stats(struct_size=ctypes.sizeof(Stats))
                if not lib().cdz_pipeline_get_stats(handle, byref(stats)):
                    self.stats = stats_dict(stats)
        del keep
        self._put((_END, error))


class Stream(Closing):
    """An iterator of float32 chunks; also a context manager."""

    def __init__(self, producer: Producer) -> None:
        self._producer = producer
        self._done = False

    def __iter__(self) -> "Stream":
        return self

    def __next__(self) -> np.ndarray:
        if self._done:
            raise StopIteration
        producer = self._producer
        while True:
            if producer.cancel.is_set():  # closed, by us or by the pipeline
                self._done = True
                producer.stop()
                raise StopIteration
            try:
                item = producer.queue.get(timeout=_POLL_SECONDS)
                break
            except queue.Empty:
                continue
        if isinstance(item, tuple) and len(item) == 2 and item[0] is _END:
            self._done = True
            self._producer.stop()
            if item[1] is not None:
                raise item[1]
            raise StopIteration
        return item

    def close(self) -> None:
        """Cancels the synthesis if it has not finished; idempotent."""
        if not self._done:
            self._done = True
            self._producer.stop()

    @property
    def cancelled(self) -> bool:
        """True when the synthesis stopped because the reader left early."""
        return self._producer.cancelled

    @property
    def sample_rate(self) -> int | None:
        return self._producer.sample_rate

    @property
    def stats(self) -> dict[str, Any] | None:
        """The run's statistics, once it has ended."""
        return None if self._producer.running else self._producer.stats

