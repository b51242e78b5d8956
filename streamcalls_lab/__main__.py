"""``python -m streamcalls_lab``: see :mod:`streamcalls_lab.cli`."""

from .cli import main

raise SystemExit(main())
