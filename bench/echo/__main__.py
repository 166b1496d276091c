"""``python -m bench.echo``: the listening bench (:mod:`bench.echo.listening`)."""

import sys

from bench.echo.listening import main

sys.exit(main())
