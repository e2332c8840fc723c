"""The Python side of org.lpf.spark.LpfException."""
from typing import Any, Optional

LPF_EXCEPTION = "org.lpf.spark.LpfException"


class LpfError(Exception):
    """An LPF failure: which process failed (``pid``, -1 when not known or on the driver),
    on which ``host``, in which ``phase`` (``bootstrap``, ``load``, ``hook``, ``finalize``,
    ``argument``, ``check``, ``native-library``, ``slots``), and the ``message`` alone.

    ``permanent`` is true when running again on the same input must fail the same way
    (a bad argument, a malformed graph). Raised from the JVM's ``LpfException`` (the
    original Py4J error is the ``__cause__``).
    """

    def __init__(self, pid: int, host: str, phase: str, message: str, permanent: bool = False) -> None:
        who = f"LPF process {pid}" if pid >= 0 else "LPF"
        super().__init__(f"{who} on {host} failed in phase {phase}: {message}")
        self.pid = pid
        self.host = host
        self.phase = phase
        self.message = message
        self.permanent = permanent


class LpfValueError(LpfError, ValueError):
    """An :class:`LpfError` that is also a ``ValueError``: a bad argument or a bad graph found
    on the driver (phase ``argument``, permanent), so that code written for GraphFrames,
    which raises ``ValueError`` there, catches it as it is."""

    def __init__(self, message: str) -> None:
        super().__init__(-1, "driver", "argument", message, permanent=True)


def lpf_error_of(java_exception: Any) -> Optional[LpfError]:
    """The LpfError for a Java throwable whose cause chain holds an LpfException, else None."""
    t = java_exception
    seen = 0
    while t is not None and seen < 64:  # a cause chain is finite; a cycle would not be
        if t.getClass().getName() == LPF_EXCEPTION:
            return LpfError(int(t.pid()), str(t.host()), str(t.phase()), str(t.detail()), bool(t.permanent()))
        t = t.getCause()
        seen += 1
    return None
