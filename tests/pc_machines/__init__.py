# SPDX-License-Identifier: GPL-2.0-only
"""Hand-written pc-machine specs kept as tests after their process-function ports replaced them (issue 28)."""
