"""``python -m helpers.pretrained``: fetch and verify lesson 09's model files (make real-model)."""

import sys

from .fetch import main

sys.exit(main())
