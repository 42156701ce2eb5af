"""``python -m helpers.grade --submissions DIR --out DIR``."""

import sys

from . import main

sys.exit(main())
