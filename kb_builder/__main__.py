"""``python -m kb_builder build|query|info`` (same as ``deepfix kb ...``)."""

import sys

from kb_builder.cli import main

sys.exit(main())
