"""The ``rdq-envelope`` command of the wheel: the command line run in this process.

Python ignores SIGPIPE and turns SIGINT into KeyboardInterrupt; the command line expects
neither, so both get their default back before it runs. It then installs its own handlers
(a signal ends the run through its one way out, every output path as it was) and the process
ends with its exit status, as the binary's would.
"""

import signal
import sys

from . import _native


def main() -> None:
    """Runs ``rdq-envelope`` with ``sys.argv``'s arguments and exits with its status."""
    for name in ("SIGPIPE", "SIGINT"):
        number = getattr(signal, name, None)
        if number is not None:
            signal.signal(number, signal.SIG_DFL)
    sys.exit(_native.cli_main(["rdq-envelope", *sys.argv[1:]]))


if __name__ == "__main__":
    main()
