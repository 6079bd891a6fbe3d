# SPDX-License-Identifier: GPL-2.0-only
import sys

from checker.cli import main

sys.exit(main())
