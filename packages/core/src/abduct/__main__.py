"""``python -m abduct``: the ``abduct`` command."""

import sys

from abduct._cli import main

sys.exit(main())
