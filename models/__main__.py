"""``python -m models list | install | verify`` (the same as ``hearth models ...``)."""

import sys

from models.cli import main

sys.exit(main())
