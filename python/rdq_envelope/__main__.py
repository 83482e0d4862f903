"""``python -m rdq_envelope``: the command line, as the ``rdq-envelope`` command runs it."""

from ._cli import main

main()
